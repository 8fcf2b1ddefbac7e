package guest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DebugPackage is the name of the package holding k's vmlinux with DWARF.
func (k Kernel) DebugPackage() string { return "linux-image-" + k.Release + "-dbg" }

// FetchDebug returns the path of k's vmlinux with DWARF (Debian's
// /usr/lib/debug/boot/vmlinux-<release>) in cache, beside the vmlinuz of
// FetchKernel. The first time, it downloads the -dbg package (about
// 860 MB for Debian 12's 6.1) with apt-get and streams out of it only the
// vmlinux (about 630 MB), then drops the package. The file appears in the
// cache only whole, so an interrupted fetch is redone.
func FetchDebug(ctx context.Context, k Kernel, cache string) (string, error) {
	dir := filepath.Join(cache, k.Release+"_"+k.Version)
	vmlinux := debugPath(cache, k)
	if exists(vmlinux) {
		return vmlinux, nil
	}
	fail := func(err error) (string, error) {
		return "", &FetchError{Kernel: k, Err: fmt.Errorf("%s: %w", k.DebugPackage(), err)}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	dropStale(dir)
	tmp, err := os.MkdirTemp(dir, "fetch-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	if err := run(ctx, tmp, "apt-get", "download", "-q", k.DebugPackage()+"="+k.Version); err != nil {
		return fail(err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return fail(fmt.Errorf("apt-get download left %d .deb files", len(debs)))
	}
	member := "./usr/lib/debug/boot/vmlinux-" + k.Release
	if err := extract(ctx, tmp, debs[0], member); err != nil {
		return fail(err)
	}
	if err := os.Rename(filepath.Join(tmp, member), vmlinux); err != nil {
		return fail(err)
	}
	return vmlinux, nil
}

// extract unpacks one member of a .deb's data into dir, streaming the
// archive through tar rather than unpacking all of it (the -dbg package
// also holds every module's debug file).
func extract(ctx context.Context, dir, deb, member string) error {
	deb2tar := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	tar := exec.CommandContext(ctx, "tar", "-x", "--occurrence=1", "-f", "-", member)
	tar.Dir = dir
	pipe, err := deb2tar.StdoutPipe()
	if err != nil {
		return err
	}
	tar.Stdin = pipe
	var debErr, tarErr bytes.Buffer
	deb2tar.Stderr, tar.Stderr = &debErr, &tarErr
	if err := deb2tar.Start(); err != nil {
		return err
	}
	err = tar.Run()
	// tar stops reading once it has the member; dpkg-deb then dies of
	// the broken pipe, which is no failure.
	pipe.Close()
	deb2tar.Wait()
	if err != nil {
		return fmt.Errorf("tar: %w: %s", err, strings.TrimSpace(tarErr.String()+" "+debErr.String()))
	}
	if !exists(filepath.Join(dir, member)) {
		return fmt.Errorf("%s has no %s", filepath.Base(deb), member)
	}
	return nil
}

// dropStale removes what fetches killed before their cleanup left in a
// cache directory: an 860 MB package, perhaps. A fetch under way
// elsewhere is younger than an hour.
func dropStale(dir string) {
	old, _ := filepath.Glob(filepath.Join(dir, "fetch-*"))
	for _, d := range old {
		if st, err := os.Stat(d); err == nil && time.Since(st.ModTime()) > time.Hour {
			os.RemoveAll(d)
		}
	}
}

func debugPath(cache string, k Kernel) string {
	return filepath.Join(cache, k.Release+"_"+k.Version, "vmlinux-"+k.Release)
}

// CachedDebug returns Debian 12's debug vmlinux if a guest test has
// fetched it into the user's cache, for the tests that read a real
// kernel's DWARF: the KDTRACE_VMLINUX environment variable names
// another.
func CachedDebug() (string, bool) {
	if p := os.Getenv("KDTRACE_VMLINUX"); p != "" {
		return p, true
	}
	cache, err := CacheDir()
	if err != nil {
		return "", false
	}
	p := debugPath(cache, Debian12)
	return p, exists(p)
}
