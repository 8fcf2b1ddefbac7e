//go:build linux

package debuginfo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// name.ko there, Fedora name.ko.debug). A module without debug info is
// skipped with a warning.
func Kernel(opts Options) (*Set, error) {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return nil, fmt.Errorf("kernel release: %w", err)
	}
	release := strings.TrimSpace(string(b))
	notes, _ := os.ReadFile("/sys/kernel/notes")
	id := noteBuildID(notes)
	root := opts.debugRoot()

	s := &Set{}
	opts = s.collecting(opts)
	cands := []string{
		buildIDPath(root, id),
		filepath.Join(root, "boot", "vmlinux-"+release),
		filepath.Join(root, "lib/modules", release, "vmlinux"),
		filepath.Join("/boot", "vmlinux-"+release),
		filepath.Join("/lib/modules", release, "build/vmlinux"),
	}
	k, _, err := openMatching("kernel", nonEmpty(cands), id, opts)
	if err != nil {
		return nil, fmt.Errorf("running kernel %s (build-id %s): %w", release, id, err)
	}
	images := []*Image{k}
	paths := modulePaths(release)
	for _, m := range loadedModules() {
		notes, _ := os.ReadFile(filepath.Join("/sys/module", m, "notes/.note.gnu.build-id"))
		mid := noteBuildID(notes)
		cands := []string{buildIDPath(root, mid)}
		if rel, ok := paths[m]; ok {
			ko := filepath.Join(root, "lib/modules", release, trimCompression(rel))
			cands = append(cands, ko, ko+".debug", filepath.Join("/lib/modules", release, rel))
		}
		img, _, err := openMatching(m, nonEmpty(cands), mid, opts)
		if err != nil {
			s.warnSkip(m, err)
			continue
		}
		images = append(images, img)
	}
	set := NewSet(images...)
	set.warnings = s.warnings
	return set, nil
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

// loadedModules returns the names in /proc/modules.
func loadedModules() []string {
	f, err := os.Open("/proc/modules")
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

// modulePaths maps module names to their paths relative to
// /lib/modules/<release>, from modules.dep. Names are as the kernel
// spells them, with '_' for '-'.
func modulePaths(release string) map[string]string {
	paths := map[string]string{}
	f, err := os.Open(filepath.Join("/lib/modules", release, "modules.dep"))
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
