package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/dtrace"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// The conformance tests run every script of DTrace's test suite through
// the command as dtrace's harness does (dtrace -C -e -s, with a helper
// process's pid as $1 where the test has a helper), on this machine's
// kernel types, libraries and probes. err.D_TAG.*.d must fail with
// D_TAG and tst.*.d must compile, except the files listed below with
// the reason; a file that fails unlisted, or passes while listed, fails
// the test, so the lists stay exact.

var tagRE = regexp.MustCompile(`\[(D_[A-Z0-9_]+)\]`)

// corpusRun compiles one corpus script and returns the error tag it
// failed with, "" when it compiled, and the message.
func corpusRun(t *testing.T, path string, h *helpers) (tag, msg string) {
	argv := []string{"kdtrace", "-x", "errtags", "-C", "-e", "-s", path}
	if dtracetest.NeedsHelper(path) {
		pid, stop := h.start(t, path)
		defer stop()
		argv = append(argv, pid)
	}
	var stdout, stderr bytes.Buffer
	if run(argv, &stdout, &stderr) == 0 {
		return "", ""
	}
	msg = strings.TrimSpace(stderr.String())
	if m := tagRE.FindStringSubmatch(msg); m != nil {
		return m[1], msg
	}
	return "(none)", msg
}

// helpers builds and runs the helper programs of the tests that have
// them, as the harness does: a test's own .c, built with the system's
// C compiler, or else a program that waits, standing for the harness's
// prebuilt ones.
type helpers struct {
	dir  string
	wait string // the waiting program
}

// localInclude finds the #include "x.h" lines of a helper's source.
var localInclude = regexp.MustCompile(`(?m)^#include\s+"([^"/]+\.h)"`)

func newHelpers(t *testing.T) *helpers {
	h := &helpers{dir: t.TempDir()}
	src := filepath.Join(h.dir, "wait.c")
	os.WriteFile(src, []byte("#include <unistd.h>\nint main(void) { for (;;) pause(); }\n"), 0o644)
	if exe, err := h.build(src, "wait"); err == nil {
		h.wait = exe
	}
	return h
}

func (h *helpers) build(src, name string) (string, error) {
	exe := filepath.Join(h.dir, name)
	args := []string{"-g", "-o", exe, src}
	// A helper that includes the header of a provider defined next to
	// it (json/tst.usdt.c's "usdt.h" from usdt.d) gets it from kdtrace
	// -h, as the harness's makefiles make it with dtrace -h.
	if text, err := os.ReadFile(src); err == nil {
		for _, m := range localInclude.FindAllSubmatch(text, -1) {
			def := filepath.Join(filepath.Dir(src), strings.TrimSuffix(string(m[1]), ".h")+".d")
			if _, err := os.Stat(def); err != nil {
				continue
			}
			hdir := filepath.Join(h.dir, name+".include")
			os.MkdirAll(hdir, 0o755)
			var stdout, stderr bytes.Buffer
			if run([]string{"kdtrace", "-h", "-s", def, "-o", filepath.Join(hdir, string(m[1]))}, &stdout, &stderr) != 0 {
				return "", fmt.Errorf("kdtrace -h -s %s: %s", def, stderr.String())
			}
			args = append(args, "-I", hdir)
		}
	}
	out, err := exec.Command("cc", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return exe, nil
}

// start runs the helper of the test at path and returns its pid.
func (h *helpers) start(t *testing.T, path string) (pid string, stop func()) {
	exe := h.wait
	c := strings.TrimSuffix(path, ".d") + ".c"
	if _, err := os.Stat(c); err == nil {
		if built, err := h.build(c, filepath.Base(strings.TrimSuffix(path, ".d"))); err == nil {
			exe = built
		} else {
			t.Logf("%s: helper does not build here, a waiting program stands in: %v", dtracetest.Rel(t, c), err)
		}
	}
	if exe == "" {
		t.Skip("no C compiler for the helper programs")
	}
	proc, err := h.run(exe)
	if err != nil && exe != h.wait {
		// Some helpers are Solaris programs that die at once here
		// (tst.gcc.c spawns with a NULL argv); the waiting program
		// stands in, as for helpers that do not build.
		t.Logf("%s: helper exits at once here (%v), a waiting program stands in", dtracetest.Rel(t, path), err)
		proc, err = h.run(h.wait)
	}
	if err != nil {
		t.Fatalf("helper %s: %v", exe, err)
	}
	return strconv.Itoa(proc.pid), func() { proc.kill() }
}

// helperProc is a running helper.
type helperProc struct {
	pid  int
	cmd  *exec.Cmd
	done chan error
}

func (p *helperProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// run starts a helper and checks that it is still running a moment
// later, so that its process can be examined.
func (h *helpers) run(exe string) (*helperProc, error) {
	cmd := exec.Command(exe)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return nil, fmt.Errorf("exited: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	return &helperProc{pid: cmd.Process.Pid, cmd: cmd, done: done}, nil
}

func TestCorpusErrors(t *testing.T) {
	files := dtracetest.Files(t, "err.D_*.d")
	helper := newHelpers(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	pass, total := 0, 0
	for _, f := range files {
		want, name, ok := dtracetest.ExpectedTag(f)
		rel := dtracetest.Rel(t, f)
		if !ok {
			t.Logf("%s: excluded: %s is an illumos tag that FreeBSD does not have", rel, name)
			continue
		}
		if reason, ok := errExcluded[rel]; ok {
			t.Logf("%s: excluded: %s", rel, reason)
			continue
		}
		total++
		got, msg := corpusRun(t, f, helper)
		reason, known := errFailing[rel]
		switch {
		case got == want.String() && known:
			t.Errorf("%s: fails with %s as it should now; remove it from errFailing", rel, want)
		case got == want.String():
			pass++
		case known:
			t.Logf("%s: known failure (%s): got %q", rel, reason, got)
		case got == "":
			t.Errorf("%s: compiled, want %s", rel, want)
		default:
			t.Errorf("%s: want %s, got %s", rel, want, msg)
		}
	}
	t.Logf("err.D_*.d: %d of %d fail with the expected tag (%.1f%%)", pass, total, 100*float64(pass)/float64(total))
}

func TestCorpusCompiles(t *testing.T) {
	files := dtracetest.Files(t, "tst.*.d")
	helper := newHelpers(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	pass, total := 0, 0
	for _, f := range files {
		rel := dtracetest.Rel(t, f)
		if reason, ok := tstExcluded[rel]; ok {
			t.Logf("%s: excluded: %s", rel, reason)
			continue
		}
		total++
		got, msg := corpusRun(t, f, helper)
		reason, known := tstFailing[rel]
		switch {
		case got == "" && known:
			t.Errorf("%s: compiles now; remove it from tstFailing", rel)
		case got == "":
			pass++
		case known:
			t.Logf("%s: known failure (%s)", rel, reason)
		default:
			t.Errorf("%s: %s", rel, msg)
		}
	}
	t.Logf("tst.*.d: %d of %d compile (%.1f%%)", pass, total, 100*float64(pass)/float64(total))
}

// errExcluded and tstExcluded are the tests whose point depends on a
// Solaris-only (or FreeBSD-only) provider, type, symbol or program.
var errExcluded = map[string]string{
	"assocs/err.D_OP_INCOMPAT.dupgtype.d":      "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"assocs/err.D_OP_INCOMPAT.dupttype.d":      "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"builtinvar/err.D_XLATE_NOCONV.nice.d":     "asserts that Solaris' lwpsinfo_t translator leaves this member out; kdtrace's Linux procfs.d translates it",
	"builtinvar/err.D_XLATE_NOCONV.priority.d": "asserts that Solaris' lwpsinfo_t translator leaves this member out; kdtrace's Linux procfs.d translates it",
	"funcs/err.D_PROTO_LEN.motoomany.d":        "uses the Solaris kernel type kmutex_t",
	"funcs/err.D_PROTO_LEN.mtatoomany.d":       "uses the Solaris kernel type kmutex_t",
	"inline/err.D_OP_INCOMPAT.baddef1.d":       "uses the Solaris kernel type dtrace_trap_func_t",
	"inline/err.D_OP_INCOMPAT.badxlate.d":      "uses the Solaris/FreeBSD thread member td_proc",
	"offsetof/err.D_UNKNOWN.badmemb.d":         "uses struct vnode, a Solaris/FreeBSD kernel type",
	"pointers/err.D_OP_LVAL.AddressChange.d":   "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"print/err.D_PRINT_VOID.bad.d":             "names the Solaris/FreeBSD kernel symbol `proc0, which Linux does not have",
	"scalars/err.D_OP_INCOMPAT.dupgtype.d":     "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"scalars/err.D_OP_INCOMPAT.dupltype.d":     "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"scalars/err.D_OP_INCOMPAT.dupttype.d":     "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"stability/err.D_ATTR_MIN.MinAttributes.d": "uses the Solaris/FreeBSD thread member t_procp",
	"trace/err.D_TRACE_VOID.bad.d":             "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"tracemem/err.D_TRACEMEM_ADDR.badaddr.d":   "names the Solaris/FreeBSD kernel symbol `v, which Linux does not have",
	"tracemem/err.D_TRACEMEM_ARGS.d":           "names the Solaris/FreeBSD kernel symbol `dtrace_zero, which Linux does not have",
	"tracemem/err.D_TRACEMEM_DYNSIZE.d":        "names the Solaris/FreeBSD kernel symbol `dtrace_zero, which Linux does not have",
	"types/err.D_CAST_INVAL.badcast.d":         "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"types/err.D_XLATE_REDECL.ResultDynType.d": "uses the Solaris kernel type kthread_t",
}

var tstExcluded = map[string]string{
	"pid/tst.fork.d":                        "reads FreeBSD's struct proc member p_pid through proc:::create's args[0]",
	"pid/tst.vfork.d":                       "reads FreeBSD's struct proc member p_pid through proc:::create's args[0]",
	"proc/tst.sigwait.d":                    "reads FreeBSD's struct proc member p_pid through proc:::signal-send's args[1]",
	"sched/tst.enqueue.d":                   "uses the Solaris/FreeBSD kernel symbol `max_cpuid",
	"aggs/tst.subr.d":                       "names the Solaris/FreeBSD kernel symbol `cpu_lock, which Linux does not have",
	"assocs/tst.orthogonality.d":            "uses the Solaris/FreeBSD thread member td_flags",
	"buffering/tst.ring3.d":                 "uses the Solaris/FreeBSD thread member t_cpu",
	"decls/tst.basics.d":                    "uses the Solaris kernel type vnode_t",
	"fbtprovider/tst.functionentry.d":       "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.functionreturnvalue.d": "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.ioctlargs.d":           "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.offset.d":              "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.offsetzero.d":          "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.return0.d":             "probes a FreeBSD kernel function that Linux does not have",
	"fbtprovider/tst.tailcall.d":            "probes a FreeBSD kernel function that Linux does not have",
	"funcs/tst.bcopy.d":                     "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"funcs/tst.ddi_pathname.d":              "uses the Solaris DDI types (struct dev_info)",
	"funcs/tst.inet_ntoa6.d":                "uses FreeBSD's struct in6_addr member __u6_addr",
	"funcs/tst.mutex_owned.d":               "uses FreeBSD's struct mtx",
	"funcs/tst.mutex_owner.d":               "uses FreeBSD's struct mtx",
	"funcs/tst.mutex_type_adaptive.d":       "uses FreeBSD's struct mtx",
	"funcs/tst.inet_ntop.d":                 "uses FreeBSD's struct in6_addr member __u6_addr",
	"inline/tst.InlineDataAssign.d":         "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"inline/tst.InlineExpression.d":         "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"inline/tst.InlineTypedef.d":            "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"misc/tst.roch.d":                       "uses the Solaris/FreeBSD thread member t_cpu",
	"nfs/tst.call.d":                        "needs the Solaris nfsv3 provider and its RPC helper",
	"nfs/tst.call3.d":                       "needs the Solaris nfsv3 provider and its RPC helper",
	"plockstat/tst.available.d":             "needs the Solaris plockstat provider",
	"plockstat/tst.libmap.d":                "needs the Solaris plockstat provider",
	"pointers/tst.GlobalVar.d":              "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"pointers/tst.basic1.d":                 "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"pointers/tst.basic2.d":                 "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"predicates/tst.argsnotcached.d":        "probes a FreeBSD kernel function that Linux does not have",
	"print/tst.xlate.d":                     "uses `dtrace_zero and the userland struct timespec",
	"printf/tst.basics.d":                   "names the Solaris/FreeBSD kernel symbol `malloc, which Linux does not have",
	"printf/tst.str.d":                      "names the Solaris/FreeBSD kernel symbol `ostype, which Linux does not have",
	"printf/tst.sym.d":                      "names the Solaris/FreeBSD kernel symbol `malloc, which Linux does not have",
	"safety/tst.copyin2.d":                  "uses the Solaris/FreeBSD thread member t_procp",
	"safety/tst.jailname.d":                 "FreeBSD's jail variable; kdtrace defines it when built for FreeBSD",
	"safety/tst.jid.d":                      "FreeBSD's jail variable; kdtrace defines it when built for FreeBSD",
	"safety/tst.msgdsize.d":                 "illumos-only subroutine (STREAMS)",
	"safety/tst.msgsize.d":                  "illumos-only subroutine (STREAMS)",
	"safety/tst.rw.d":                       "names the Solaris/FreeBSD kernel symbol `unp_global_rwlock, which Linux does not have",
	"safety/tst.vahole.d":                   "names the Solaris/FreeBSD kernel symbol `kernelbase, which Linux does not have",
	"scalars/tst.misc.d":                    "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"scalars/tst.selfarray2.d":              "uses FreeBSD's struct thread",
	"sdt/tst.sdtargs.d":                     "needs the Solaris test provider",
	"sysevent/tst.post.d":                   "needs the Solaris sysevent provider",
	"sysevent/tst.post_chan.d":              "needs the Solaris sysevent provider",
	"trace/tst.misc.d":                      "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"tracemem/tst.dynsize.d":                "names the Solaris/FreeBSD kernel symbol `dtrace_zero, which Linux does not have",
	"tracemem/tst.rootvp.d":                 "names the Solaris/FreeBSD kernel symbol `rootvp, which Linux does not have",
	"translators/tst.ProcModelTrans.d":      "uses the Solaris kernel type proc_t",
	"types/tst.complex.d":                   "uses FreeBSD's enum uio_rw",
	"types/tst.ptrincop.d":                  "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
	"types/tst.ptrops.d":                    "names the Solaris/FreeBSD kernel symbol `kmem_flags, which Linux does not have",
}

// errFailing and tstFailing are the tests kdtrace gets wrong, with why.
var errFailing = map[string]string{
	"cg/err.D_NOREG.noreg.d":                       "kdtrace spills registers to clause-local slots where dtrace runs out of them (issue #5 asks for spills)",
	"pid/err.D_PROC_CREATEFAIL.many.d":             "Debian's libc has fewer functions than fasttrap's probe limit",
	"preprocessor/err.D_PRAGCTL_INVAL.tabdefine.d": "needs a cpp that ignores indented directives (Sun's); FreeBSD's harness marks it EXFAIL too",
}

var tstFailing = map[string]string{
	"builtinvar/tst.lwpsinfo.d":  "procfs.d does not translate pr_wchan: Linux keeps no wait channel in task_struct",
	"builtinvar/tst.lwpsinfo1.d": "procfs.d does not translate pr_wchan: Linux keeps no wait channel in task_struct",
	"io/tst.fds.d":               "io.d does not translate fi_mount: a file's mount point is no struct path d_path() can name",
	"usdt/tst.argmap.d":          "the four mapped arguments come from argmap.d, which dtrace -G links into the helper; the helper's <sys/sdt.h> notes give the probe two",
}

// compileDOF compiles script file f with macro arguments args, with
// -x errtags and -C, into the DOF of its ECBs; dtrace -G, which takes
// its operands as objects, could not give it the arguments.
func compileDOF(f string, args []string) ([]byte, error) {
	h, err := dtrace.Open(&dtrace.Config{Args: args})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	for _, o := range []string{"errtags", "cpp"} {
		if err := h.SetOpt(o, ""); err != nil {
			return nil, err
		}
	}
	p, err := h.Compile(dtrace.Script, f, 0)
	if err != nil {
		return nil, err
	}
	return dtrace.DOF(p)
}

// TestCorpusEmits compiles every tst.*.d that compiles into DOF
// (dtrace -G) and loads it as the kernel would: the code generator must
// accept what the checker accepts, and the kernel what it makes.
func TestCorpusEmits(t *testing.T) {
	files := dtracetest.Files(t, "tst.*.d")
	helper := newHelpers(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	emitted, loaded, total := 0, 0, 0
	for _, f := range files {
		rel := dtracetest.Rel(t, f)
		if _, ok := tstExcluded[rel]; ok {
			continue
		}
		if _, ok := tstFailing[rel]; ok {
			continue
		}
		total++
		var args []string
		var stop func()
		if dtracetest.NeedsHelper(f) {
			var pid string
			pid, stop = helper.start(t, f)
			args = append(args, pid)
		}
		b, err := compileDOF(f, args)
		if stop != nil {
			stop()
		}
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		emitted++
		if _, err := enabling.Load(b, nil); err != nil {
			t.Errorf("%s: the kernel's checks refuse its DOF: %v", rel, err)
			continue
		}
		loaded++
	}
	t.Logf("tst.*.d: %d of %d compile to DOF, %d load", emitted, total, loaded)
}
