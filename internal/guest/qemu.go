package guest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A Config says what to boot and what to run in the guest.
type Config struct {
	Image   *Image
	Busybox string            // a static busybox on the host
	Files   map[string]string // guest path -> host path of a static program
	Script  string            // run by busybox sh as root, in /tmp
	Timeout time.Duration     // for the whole boot; 2 minutes if zero
	// Data is more files, guest path -> host path, put in an archive of
	// their own, uncompressed: a debug vmlinux, too large to gunzip
	// under TCG.
	Data map[string]string
	// Memory is the guest's RAM in qemu's -m syntax, 1G if empty. The
	// initramfs lives in it, twice while the kernel unpacks it.
	Memory string
}

// A Result is what a boot gave.
type Result struct {
	Output  string        // what the script wrote, stdout and stderr
	Status  int           // the script's exit status
	Console string        // the whole serial console, for diagnosis
	Wall    time.Duration // from starting qemu to its exit
}

// QEMU is the emulator Run starts.
const QEMU = "qemu-system-x86_64"

// Run boots cfg.Image with an initramfs of busybox, cfg.Files and an
// /init running cfg.Script, waits for the guest to power off, and
// returns the script's output cut from the console. A guest that never
// prints the end sentinel (a panic, a hang past the timeout) is an
// error carrying the console's tail.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	begin := "KDTRACE-GUEST-BEGIN-" + hex.EncodeToString(nonce[:])
	end := "KDTRACE-GUEST-END-" + hex.EncodeToString(nonce[:])

	var fs Initramfs
	if err := fs.Program("bin/busybox", cfg.Busybox); err != nil {
		return nil, err
	}
	for guest, host := range cfg.Files {
		if err := fs.Program(guest, host); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp"} {
		fs.Dir(d)
	}
	fs.File("init", []byte(initScript(begin, end)), 0o755)
	fs.File("script", []byte(cfg.Script), 0o644)

	dir, err := os.MkdirTemp("", "kdtrace-guest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	initrd := filepath.Join(dir, "initrd.gz")
	f, err := os.Create(initrd)
	if err != nil {
		return nil, err
	}
	if err := writeInitrd(f, &fs, cfg.Data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	memory := cfg.Memory
	if memory == "" {
		memory = "1G"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, QEMU,
		"-accel", "tcg", "-cpu", "max", "-m", memory, "-smp", "1",
		"-nographic", "-nodefaults", "-no-reboot", "-serial", "stdio",
		"-kernel", cfg.Image.Vmlinuz, "-initrd", initrd,
		// panic=-1 and -no-reboot turn a panic into qemu's exit;
		// loglevel=3 keeps all but errors off the console.
		"-append", "console=ttyS0 panic=-1 quiet loglevel=3")
	var console bytes.Buffer
	cmd.Stdout = &console
	cmd.Stderr = &console
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	res := &Result{
		Console: strings.ReplaceAll(console.String(), "\r\n", "\n"),
		Wall:    time.Since(start),
	}
	out, status, ok := cut(res.Console, begin, end)
	if !ok {
		why := "the guest stopped before the script ended"
		if ctx.Err() != nil {
			why = fmt.Sprintf("the guest did not finish within %v", timeout)
		} else if runErr != nil {
			why = fmt.Sprintf("%s: %v", QEMU, runErr)
		}
		return res, fmt.Errorf("%s; console ends:\n%s", why, tail(res.Console, 40))
	}
	res.Output, res.Status = out, status
	return res, nil
}

// writeInitrd writes fs gzipped and, when there are data files, an
// uncompressed archive of them after it.
func writeInitrd(w io.Writer, fs *Initramfs, data map[string]string) error {
	n, err := fs.WriteTo(w)
	if err != nil || len(data) == 0 {
		return err
	}
	if _, err := PadTo4(w, n); err != nil {
		return err
	}
	var raw Initramfs
	for guest, host := range data {
		if err := raw.HostFile(guest, host, 0o644); err != nil {
			return err
		}
	}
	_, err = raw.WriteUncompressed(w)
	return err
}

// initScript is the guest's /init: it mounts what tracing needs, runs
// the script with its output in a file, and prints the file between
// the sentinels, the end one carrying the exit status.
func initScript(begin, end string) string {
	return `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
cd /tmp
sh /script >/tmp/.out 2>&1
status=$?
echo
echo ` + begin + `
cat /tmp/.out
echo ` + end + ` $status
poweroff -f
`
}

// cut returns the lines between the begin sentinel and the end one,
// and the status the end one carries.
func cut(console, begin, end string) (string, int, bool) {
	i := strings.Index(console, "\n"+begin+"\n")
	if i < 0 {
		return "", 0, false
	}
	rest := console[i+len(begin)+2:]
	j := strings.Index(rest, end+" ")
	if j < 0 || (j > 0 && rest[j-1] != '\n') {
		return "", 0, false
	}
	line, _, _ := strings.Cut(rest[j+len(end)+1:], "\n")
	status, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return "", 0, false
	}
	return rest[:j], status, true
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Available says why the guest cannot run on this machine, or nil:
// qemu and a static busybox (Debian's busybox-static) must be there.
func Available() (busybox string, err error) {
	if _, err := exec.LookPath(QEMU); err != nil {
		return "", fmt.Errorf("%s not found (apt-get install qemu-system-x86)", QEMU)
	}
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		var fs Initramfs
		err := fs.Program("busybox", p)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, errNotStatic) {
			break
		}
	}
	return "", errors.New("no static busybox (apt-get install busybox-static)")
}
