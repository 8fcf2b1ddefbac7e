//go:build linux

package debuginfo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kdtrace/kdtrace/internal/buildid"
)

// Kernel makes the set of the running Linux kernel and its loaded
// modules. The kernel's build-id comes from /sys/kernel/notes, and its
// DWARF from the first of: the build-id path, Debian's
// <root>/boot/vmlinux-<release>, Fedora's and Ubuntu's
// <root>/lib/modules/<release>/vmlinux, /boot/vmlinux-<release> and
// /lib/modules/<release>/build/vmlinux that has that build-id. Modules
// are those of /proc/modules, with build-ids from
// /sys/module/<name>/notes, found by build-id or under
// <root>/lib/modules/<release>/ at their modules.dep path (Debian keeps
// name.ko there, Fedora name.ko.debug), or for a module modules.dep does
// not list (an out-of-tree module loaded with insmod), where depmod
// would look: updates/, updates/dkms/ and extra/. A module without debug
// info is skipped with a warning.
//
// Without the kernel's own debug image, the set holds the modules'
// images alone and KernelError says why the kernel's is missing; when
// no module has one either, that is Kernel's error.
func Kernel(opts Options) (*Set, error) {
	return kernelAt("/", opts)
}

// kernelAt is Kernel on a system whose /proc, /sys, /boot and /lib are
// under sysroot.
func kernelAt(sysroot string, opts Options) (*Set, error) {
	sys := func(p string) string { return filepath.Join(sysroot, p) }
	b, err := os.ReadFile(sys("/proc/sys/kernel/osrelease"))
	if err != nil {
		return nil, fmt.Errorf("kernel release: %w", err)
	}
	release := strings.TrimSpace(string(b))
	id, _ := buildid.Running(sysroot, "vmlinux")
	root := opts.debugRoot()
	modDir := sys(filepath.Join("/lib/modules", release))

	s := &Set{}
	opts = s.collecting(opts)
	cands := []string{
		buildIDPath(root, id),
		filepath.Join(root, "boot", "vmlinux-"+release),
		filepath.Join(root, "lib/modules", release, "vmlinux"),
		sys(filepath.Join("/boot", "vmlinux-"+release)),
		filepath.Join(modDir, "build/vmlinux"),
	}
	var images []*Image
	k, _, kerr := openMatching("kernel", nonEmpty(cands), id, opts)
	if kerr != nil {
		kerr = fmt.Errorf("running kernel %s (build-id %s): %w", release, id, kerr)
	} else {
		images = append(images, k)
	}
	paths := modulePaths(modDir)
	for _, m := range loadedModules(sys("/proc/modules")) {
		mid, _ := buildid.Running(sysroot, m)
		cands := []string{buildIDPath(root, mid)}
		if rel, ok := paths[m]; ok {
			ko := filepath.Join(root, "lib/modules", release, trimCompression(rel))
			cands = append(cands, ko, ko+".debug", filepath.Join(modDir, rel))
		} else {
			for _, rel := range outOfTree(m) {
				cands = append(cands, filepath.Join(modDir, rel))
			}
		}
		img, _, err := openMatching(m, nonEmpty(cands), mid, opts)
		if err != nil {
			s.warnSkip(m, err)
			continue
		}
		images = append(images, img)
	}
	if kerr != nil && len(images) == 0 {
		return nil, kerr
	}
	set := NewSet(images...)
	set.warnings = s.warnings
	set.kernelErr = kerr
	return set, nil
}

// outOfTree returns where, relative to /lib/modules/<release>, depmod
// looks for a module it was not built with, in its order: DKMS's and
// the administrator's updates/ first, then extra/, where kbuild's
// modules_install puts external modules. The file may spell the name
// with '-' where the kernel has '_'.
func outOfTree(module string) []string {
	names := []string{module + ".ko"}
	if dashed := strings.ReplaceAll(module, "_", "-"); dashed != module {
		names = append(names, dashed+".ko")
	}
	var rels []string
	for _, dir := range []string{"updates", "updates/dkms", "extra"} {
		for _, n := range names {
			rels = append(rels, filepath.Join(dir, n))
		}
	}
	return rels
}

func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func trimCompression(p string) string {
	for _, suf := range []string{".xz", ".zst", ".gz"} {
		p = strings.TrimSuffix(p, suf)
	}
	return p
}

// loadedModules returns the names in /proc/modules, at path.
func loadedModules(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), " "); ok {
			names = append(names, name)
		}
	}
	return names
}

// modulePaths maps module names to their paths relative to modDir,
// /lib/modules/<release>, from its modules.dep. Names are as the kernel
// spells them, with '_' for '-'.
func modulePaths(modDir string) map[string]string {
	paths := map[string]string{}
	f, err := os.Open(filepath.Join(modDir, "modules.dep"))
	if err != nil {
		return paths
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rel, _, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(trimCompression(filepath.Base(rel)), ".ko")
		paths[strings.ReplaceAll(name, "-", "_")] = rel
	}
	return paths
}
