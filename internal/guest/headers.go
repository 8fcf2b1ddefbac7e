package guest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Headers is a kernel's build tree for out-of-tree modules, fetched
// into the cache: make -C Dir M=<module dir> builds a module that the
// kernel loads.
type Headers struct {
	Kernel
	Dir string // linux-headers-<Release>, the tree make -C is given
}

// headerPackages are the packages an out-of-tree module build needs:
// the release's configured tree, the source headers it includes, and
// kbuild's scripts and host tools. All share the kernel's version.
func (k Kernel) headerPackages() ([]string, error) {
	m := releaseRE.FindStringSubmatch(k.Release)
	if m == nil {
		return nil, fmt.Errorf("release %q is not Debian's <version>-<abi>-<flavour>", k.Release)
	}
	common := m[1] + "-common"
	kbuild := "linux-kbuild-" + m[2]
	return []string{
		"linux-headers-" + k.Release + "=" + k.Version,
		"linux-headers-" + common + "=" + k.Version,
		kbuild + "=" + k.Version,
	}, nil
}

// releaseRE splits a Debian 12 kernel release: 6.1.0-56-amd64 (and
// 6.1.0-56-cloud-amd64) is linux-headers-6.1.0-56-common's and
// linux-kbuild-6.1's.
var releaseRE = regexp.MustCompile(`^((\d+\.\d+)\.\d+-\d+)-[a-z0-9-]+$`)

// FetchHeaders returns k's headers from cache, in the directory
// FetchKernel uses, downloading the three packages with apt-get and
// unpacking them with dpkg-deb the first time. The tree is renamed into
// place only when whole, so an interrupted fetch is redone, and the
// .debs are dropped.
//
// Debian's tree names its source headers and kbuild by absolute paths
// (its Makefile includes /usr/src/linux-headers-<abi>-common/Makefile);
// the copy in the cache includes its own instead, and its symlinks to
// kbuild are relative already, so nothing needs installing as root.
func FetchHeaders(ctx context.Context, k Kernel, cache string) (*Headers, error) {
	dir := filepath.Join(cache, k.Release+"_"+k.Version)
	root := filepath.Join(dir, "headers")
	h := &Headers{Kernel: k, Dir: headersDir(cache, k)}
	if exists(filepath.Join(h.Dir, "Makefile")) {
		return h, nil
	}
	pkgs, err := k.headerPackages()
	if err != nil {
		return nil, &FetchError{k, err}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &FetchError{k, err}
	}
	tmp, err := os.MkdirTemp(dir, "fetch-headers-")
	if err != nil {
		return nil, &FetchError{k, err}
	}
	defer os.RemoveAll(tmp)
	if err := run(ctx, tmp, "apt-get", append([]string{"download", "-q"}, pkgs...)...); err != nil {
		return nil, &FetchError{k, err}
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != len(pkgs) {
		return nil, &FetchError{k, fmt.Errorf("apt-get download left %d .deb files for %d packages", len(debs), len(pkgs))}
	}
	newRoot := filepath.Join(tmp, "root")
	for _, deb := range debs {
		if err := run(ctx, tmp, "dpkg-deb", "-x", deb, newRoot); err != nil {
			return nil, &FetchError{k, err}
		}
	}
	// The Makefile must name the tree where it will be, not where it
	// is unpacked.
	mk := filepath.Join(newRoot, "usr/src/linux-headers-"+k.Release, "Makefile")
	b, err := os.ReadFile(mk)
	if err != nil {
		return nil, &FetchError{k, err}
	}
	fixed := includeRE.ReplaceAll(b, []byte("include "+filepath.Join(root, "usr/src")+"/"))
	if err := os.WriteFile(mk, fixed, 0o644); err != nil {
		return nil, &FetchError{k, err}
	}
	// A tree left by an interrupted fetch has no Makefile; it goes.
	if err := os.RemoveAll(root); err != nil {
		return nil, &FetchError{k, err}
	}
	if err := os.Rename(newRoot, root); err != nil {
		return nil, &FetchError{k, err}
	}
	return h, nil
}

// headersDir is where FetchHeaders puts k's tree in cache.
func headersDir(cache string, k Kernel) string {
	return filepath.Join(cache, k.Release+"_"+k.Version, "headers", "usr/src/linux-headers-"+k.Release)
}

// includeRE is the start of the Makefile's include of the common tree.
var includeRE = regexp.MustCompile(`(?m)^include /usr/src/`)

// BuildModule builds the out-of-tree module whose Kbuild file and
// sources are in src, in a copy under dir (kbuild writes beside the
// sources), and returns the path of the .ko named name. The kernel's
// configuration asks for debug information, so the module carries its
// DWARF.
func (h *Headers) BuildModule(ctx context.Context, src, dir, name string) (string, error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := run(ctx, dir, "make", "-s", "-C", h.Dir, "M="+dir, "modules"); err != nil {
		return "", fmt.Errorf("building %s against %s: %w", name, h.Dir, err)
	}
	return filepath.Join(dir, name+".ko"), nil
}
