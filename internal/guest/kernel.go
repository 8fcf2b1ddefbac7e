package guest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// A Kernel names a Debian kernel image package at one version: the ABI
// number in the package name changes with security updates, and a
// test's offsets hold for one build only.
type Kernel struct {
	Release string // uname -r, as in linux-image-<Release>
	Version string // the package's version
	// Unsigned says the image comes from the -unsigned package, the
	// same kernel without the signature for UEFI Secure Boot, which
	// QEMU's -kernel does not check: Debian publishes the signed
	// package after the others, and not always before it drops them.
	Unsigned bool
}

// Debian12 is the kernel linux-tracing.md measured: Debian 12's 6.1,
// build-id eb4fbcd037e7253717950bf2b93bd5566f47c56f, with kprobes,
// optprobes and kprobes on ftrace. TestGuest's offsets are this
// build's.
var Debian12 = Kernel{Release: "6.1.0-56-amd64", Version: "6.1.192-2"}

// Package is the image package's name as apt knows it.
func (k Kernel) Package() string {
	if k.Unsigned {
		return "linux-image-" + k.Release + "-unsigned"
	}
	return "linux-image-" + k.Release
}

// Image is a kernel fetched into the cache.
type Image struct {
	Kernel
	Vmlinuz string // the bootable image
	Config  string // its build configuration
}

// CacheDir is where kernels are cached unless a caller says otherwise:
// $XDG_CACHE_HOME/kdtrace/guest, or ~/.cache/kdtrace/guest. It is
// created if need be, and refused, as kdtrace's own cache is, if
// another user could change it (see internal/cachedir): the tests run
// as root, and what they fetch there, they boot.
func CacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "kdtrace", "guest")
	d, err := cachedir.Open(dir)
	if err != nil {
		return "", err
	}
	d.Close()
	return dir, nil
}

// A FetchError says the kernel could not be downloaded or unpacked.
type FetchError struct {
	Kernel Kernel
	Err    error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("fetching %s=%s: %v", e.Kernel.Package(), e.Kernel.Version, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// Offline reports whether the fetch failed for want of a network to the
// archive, by apt's words for it (its messages are in English: run sets
// LC_ALL=C), rather than for a package the archive no longer has.
func (e *FetchError) Offline() bool {
	msg := e.Err.Error()
	for _, s := range offlineMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// offlineMessages are what apt-get says when it cannot reach a mirror:
// the name does not resolve, or nothing answers.
var offlineMessages = []string{
	"Temporary failure resolving",
	"Could not resolve",
	"Could not connect to",
	"Failed to connect to",
	"Network is unreachable",
	"No route to host",
	"Connection timed out",
}

// FetchKernel returns k's vmlinuz and config from cache, a directory
// per version, downloading the package with apt-get and unpacking it
// with dpkg-deb the first time. The files appear in the cache only
// whole (renamed into place), so an interrupted fetch is redone.
func FetchKernel(ctx context.Context, k Kernel, cache string) (*Image, error) {
	dir := filepath.Join(cache, k.Release+"_"+k.Version)
	img := &Image{
		Kernel:  k,
		Vmlinuz: filepath.Join(dir, "vmlinuz-"+k.Release),
		Config:  filepath.Join(dir, "config-"+k.Release),
	}
	if exists(img.Vmlinuz) && exists(img.Config) {
		return img, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &FetchError{k, err}
	}
	dropStale(dir)
	tmp, err := os.MkdirTemp(dir, "fetch-")
	if err != nil {
		return nil, &FetchError{k, err}
	}
	defer os.RemoveAll(tmp)
	// apt-get download writes into its working directory.
	if err := run(ctx, tmp, "apt-get", "download", "-q", k.Package()+"="+k.Version); err != nil {
		return nil, &FetchError{k, err}
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return nil, &FetchError{k, fmt.Errorf("apt-get download left %d .deb files", len(debs))}
	}
	root := filepath.Join(tmp, "root")
	if err := run(ctx, tmp, "dpkg-deb", "-x", debs[0], root); err != nil {
		return nil, &FetchError{k, err}
	}
	for _, f := range []string{img.Config, img.Vmlinuz} {
		if err := os.Rename(filepath.Join(root, "boot", filepath.Base(f)), f); err != nil {
			return nil, &FetchError{k, err}
		}
	}
	return img, nil
}

// HasConfig reports whether the image was built with option set to y,
// e.g. CONFIG_KPROBES.
func (img *Image) HasConfig(option string) (bool, error) {
	b, err := os.ReadFile(img.Config)
	if err != nil {
		return false, err
	}
	return bytes.Contains(b, []byte("\n"+option+"=y\n")), nil
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// run runs a command in dir; its error carries the command's stderr,
// in English (LC_ALL=C).
func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return fmt.Errorf("%s: %w", name, err)
		}
		return fmt.Errorf("%s: %w: %s", name, err, msg)
	}
	return nil
}
