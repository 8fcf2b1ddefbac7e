package debuginfod

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// A Transfer starts the download of url into body and returns its
// reports, in the protocol of package wire. Closing them ends the
// download if it has not ended, waits for it, and returns a failure
// the reports could not tell (the helper's crash). Cancelling ctx ends
// the download.
type Transfer func(ctx context.Context, url string, body *os.File) (io.ReadCloser, error)

// helperName is the program that makes the downloads: see
// cmd/kdtrace-debuginfod.
const helperName = "kdtrace-debuginfod"

// transfer returns c.Transfer, or else the helper's, found at the first
// call.
func (c *Client) transfer() (Transfer, error) {
	if c.Transfer != nil {
		return c.Transfer, nil
	}
	c.helperOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			exe = ""
		}
		c.helper, c.helperErr = findHelper(exe)
		if c.helperErr == nil {
			c.verbosef("downloading with %s", c.helper)
		}
	})
	if c.helperErr != nil {
		return nil, c.helperErr
	}
	return Helper(c.helper), nil
}

// findHelper returns the path of kdtrace-debuginfod: next to exe, the
// running program (its links resolved), else in $PATH. kdtrace runs as
// root: a helper others could change is refused.
func findHelper(exe string) (string, error) {
	dir := "an unknown directory"
	if exe != "" {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir = filepath.Dir(exe)
		path := filepath.Join(dir, helperName)
		if _, err := os.Lstat(path); err == nil {
			return path, checkHelper(path)
		}
	}
	path, err := exec.LookPath(helperName)
	if err != nil {
		return "", fmt.Errorf("%s, which makes kdtrace's downloads, was found neither next to kdtrace (in %s) nor in $PATH: install it with kdtrace (go build -o DIR ./cmd/... puts both in DIR)", helperName, dir)
	}
	return path, checkHelper(path)
}

// checkHelper refuses a helper that is no regular file, or one that a
// user other than root and kdtrace's could change or replace: it, or a
// directory above it, is theirs or writable by them (but for a sticky
// directory, such as /tmp, in which they can replace only their own
// files).
func checkHelper(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("refusing %s: %w", path, err)
	}
	uid := fi.Sys().(*syscall.Stat_t).Uid
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("refusing %s, which is not a regular file (%v)", path, fi.Mode().Type())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("refusing %s, which its group or others may write (mode %v)", path, fi.Mode().Perm())
	case uid != 0 && int(uid) != os.Geteuid():
		return fmt.Errorf("refusing %s, owned by uid %d, neither root nor kdtrace's user (uid %d)", path, uid, os.Geteuid())
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("refusing %s: %w", path, err)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		di, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("refusing %s: %w", path, err)
		}
		duid := di.Sys().(*syscall.Stat_t).Uid
		switch {
		case duid != 0 && int(duid) != os.Geteuid():
			return fmt.Errorf("refusing %s, in %s, owned by uid %d, neither root nor kdtrace's user (uid %d)", path, dir, duid, os.Geteuid())
		case di.Mode().Perm()&0o022 != 0 && di.Mode()&os.ModeSticky == 0:
			return fmt.Errorf("refusing %s, in %s, which its group or others may write (mode %v)", path, dir, di.Mode().Perm())
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// Helper returns the Transfer that runs the kdtrace-debuginfod at path
// (see that command for how), in a process group of its own, so that a
// terminal's interrupt reaches kdtrace alone, which ends the helper
// through ctx.
func Helper(path string) Transfer {
	return func(ctx context.Context, url string, body *os.File) (io.ReadCloser, error) {
		cmd := exec.CommandContext(ctx, path, url)
		cmd.ExtraFiles = []*os.File{body}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// Never written: its end, when kdtrace's process ends, however
		// it ends, ends the helper's.
		if _, err := cmd.StdinPipe(); err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		h := &helperRun{cmd: cmd, stdout: stdout}
		cmd.Stderr = &h.stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return h, nil
	}
}

// helperRun is a running helper's reports.
type helperRun struct {
	cmd    *exec.Cmd
	stdout io.Reader
	stderr head
	eof    bool
}

func (h *helperRun) Read(b []byte) (int, error) {
	n, err := h.stdout.Read(b)
	if err == io.EOF {
		h.eof = true
	}
	return n, err
}

// Close waits for the helper, killing it (by its process ID) first
// when its reports were not read to their end: their reader has an
// error of its own to tell.
func (h *helperRun) Close() error {
	if !h.eof {
		h.cmd.Process.Kill()
		h.cmd.Wait()
		return nil
	}
	if err := h.cmd.Wait(); err != nil {
		if line, _, _ := bytes.Cut(h.stderr.b, []byte("\n")); len(line) > 0 {
			return fmt.Errorf("%s: %v: %s", helperName, err, line)
		}
		return fmt.Errorf("%s: %v", helperName, err)
	}
	return nil
}

// head keeps the start of what is written to it.
type head struct{ b []byte }

func (h *head) Write(b []byte) (int, error) {
	if room := 1024 - len(h.b); room > 0 {
		h.b = append(h.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}
