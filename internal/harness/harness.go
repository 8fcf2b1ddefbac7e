package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Runner runs suite tests with one dtrace command.
type Runner struct {
	// DTrace is the dtrace command: a file whose base name is the
	// program name its messages give ("dtrace").
	DTrace string
	// Env is added to each test's environment.
	Env []string
	// Timeout bounds one test, as the harness's ATF timeout does.
	Timeout time.Duration
	// Work is where the runner copies folders; each test gets a fresh
	// directory under it.
	Work string

	mu      sync.Mutex
	folders map[string]*folder // by the suite's folder
}

// A folder is a suite folder copied once with its helpers built, which
// each of its tests then copies.
type folder struct {
	once sync.Once
	dir  string
	errs map[string]error // why a helper (tst.X.c) did not build
	err  error
}

// prepared returns the folder src copied and its helpers built, done
// once however many of its tests run.
func (r *Runner) prepared(src string) *folder {
	r.mu.Lock()
	if r.folders == nil {
		r.folders = map[string]*folder{}
	}
	f := r.folders[src]
	if f == nil {
		f = &folder{}
		r.folders[src] = f
	}
	r.mu.Unlock()
	f.once.Do(func() {
		if f.dir, f.err = os.MkdirTemp(r.Work, "folder"); f.err != nil {
			return
		}
		if f.err = copyDir(f.dir, src); f.err == nil {
			f.errs = r.buildHelpers(f.dir)
		}
	})
	return f
}

// A Result is what a test did and whether it passed.
type Result struct {
	Test   string // the test's path relative to the suite's folder
	Pass   bool
	Reason string // why it failed: status, first error line, or the first differing line
	Stdout []byte
	Stderr []byte
	Time   time.Duration
}

// Run runs the test at path, a tst.X.d or tst.X.ksh file in a folder of
// the suite rooted at root, and judges it against its .out file.
func (r *Runner) Run(root, path string) (res Result) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = path
	}
	res.Test = rel
	start := time.Now()
	defer func() { res.Time = time.Since(start) }()
	want, err := os.ReadFile(path + ".out")
	if err != nil {
		res.Reason = err.Error()
		return res
	}
	dir, err := os.MkdirTemp(r.Work, "tst")
	if err != nil {
		res.Reason = err.Error()
		return res
	}
	defer os.RemoveAll(dir)
	f := r.prepared(filepath.Dir(path))
	if f.err != nil {
		res.Reason = f.err.Error()
		return res
	}
	// Only the failure to build the test's own helper is the test's:
	// other tests of the folder may need helpers this system cannot
	// build.
	name := filepath.Base(path)
	if err := f.errs[strings.TrimSuffix(strings.TrimSuffix(name, ".d"), ".ksh")]; err != nil {
		res.Reason = err.Error()
		return res
	}
	if err := copyDir(dir, f.dir); err != nil {
		res.Reason = err.Error()
		return res
	}
	res.Stdout, res.Stderr, err = r.exec(dir, filepath.Base(path))
	switch {
	case err != nil:
		res.Reason = err.Error()
		if line := firstLine(res.Stderr); line != "" {
			res.Reason += ": " + line
		}
	case bytes.HasPrefix(res.Stdout, []byte("#!/")) && strings.HasSuffix(firstLine(res.Stdout), "ksh"):
		// The test's output is a script that checks what it traced.
		if _, stderr, err := r.command(dir, "ksh", "/dev/stdin").runInput(r, res.Stdout); err != nil {
			res.Reason = fmt.Sprintf("its output script failed: %v: %s", err, firstLine(stderr))
		} else if !bytes.Equal(res.Stdout, want) {
			res.Reason = difference(res.Stdout, want)
		} else {
			res.Pass = true
		}
	case !bytes.Equal(res.Stdout, want):
		res.Reason = difference(res.Stdout, want)
	default:
		res.Pass = true
	}
	return res
}

// exec runs the test file name in dir as dtest.sh's runtest does.
func (r *Runner) exec(dir, name string) (stdout, stderr []byte, err error) {
	if strings.HasSuffix(name, ".ksh") {
		c := r.command(dir, "ksh", name, r.DTrace)
		c.cmd.Env = append(c.cmd.Env, "tst="+name)
		stdout, stderr, err = c.run(r)
		// Many scripts work in /var/tmp/dtest.$$ and remove it only
		// when they succeed: remove what this one left, by its PID.
		os.RemoveAll(fmt.Sprintf("/var/tmp/dtest.%d", c.cmd.Process.Pid))
		return stdout, stderr, err
	}
	args := []string{"-C", "-s", name}
	exe := filepath.Join(dir, strings.TrimSuffix(name, ".d")+".exe")
	if _, err := os.Stat(exe); err == nil {
		helper := r.command(dir, exe)
		if err := helper.cmd.Start(); err != nil {
			return nil, nil, fmt.Errorf("helper %s: %v", filepath.Base(exe), err)
		}
		defer func() {
			syscall.Kill(-helper.cmd.Process.Pid, syscall.SIGKILL)
			helper.cmd.Wait()
		}()
		args = append(args, fmt.Sprint(helper.cmd.Process.Pid))
	}
	return r.command(dir, r.DTrace, args...).run(r)
}

// A proc is one of a test's commands, in a process group of its own.
type proc struct {
	cmd *exec.Cmd
}

func (r *Runner) command(dir, name string, args ...string) *proc {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &proc{cmd: cmd}
}

// run runs p to its end or the runner's timeout, and returns its
// output; an error says how it failed: its exit status, or the timeout.
func (p *proc) run(r *Runner) (stdout, stderr []byte, err error) {
	return p.runInput(r, nil)
}

func (p *proc) runInput(r *Runner, input []byte) (stdout, stderr []byte, err error) {
	var out, errb bytes.Buffer
	p.cmd.Stdout, p.cmd.Stderr = &out, &errb
	if input != nil {
		p.cmd.Stdin = bytes.NewReader(input)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = fmt.Errorf("did not finish in %v", r.Timeout)
	}
	// Whatever the test left running in its group ends with it.
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = fmt.Errorf("exit status %d", ee.ExitCode())
	}
	return out.Bytes(), errb.Bytes(), err
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

// difference describes the first line where got differs from want.
func difference(got, want []byte) string {
	g := strings.SplitAfter(string(got), "\n")
	w := strings.SplitAfter(string(want), "\n")
	for i := 0; ; i++ {
		switch {
		case i == len(g) && i == len(w):
			return "output differs"
		case i == len(g):
			return fmt.Sprintf("output ends at line %d, want %q", i+1, w[i])
		case i == len(w):
			return fmt.Sprintf("output has more than %d lines: %q", i, g[i])
		case g[i] != w[i]:
			return fmt.Sprintf("output line %d is %q, want %q", i+1, g[i], w[i])
		}
	}
}
