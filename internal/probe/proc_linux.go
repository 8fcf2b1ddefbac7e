//go:build linux

package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procFS finds processes through Linux's /proc.
type procFS struct {
	root string // /proc
}

// grab reads the objects process pid maps: the files it maps with
// execute permission, which /proc/pid/root reaches from here even in
// another mount namespace.
func (fs *procFS) grab(pid int) (*process, error) {
	dir := filepath.Join(fs.root, strconv.Itoa(pid))
	maps, err := os.ReadFile(filepath.Join(dir, "maps"))
	if err != nil {
		return nil, err
	}
	if len(maps) == 0 {
		return nil, fmt.Errorf("process %d maps nothing (a kernel thread or a zombie)", pid)
	}
	exe, _ := os.Readlink(filepath.Join(dir, "exe"))
	exe = strings.TrimSuffix(exe, " (deleted)")
	proc := &process{pid: pid}
	seen := map[string]*procObject{}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// 55d4c8a2e000-55d4c8a32000 r-xp 00002000 fe:01 1234 /usr/bin/sleep
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || len(f[1]) < 3 || f[1][2] != 'x' {
			continue
		}
		p := strings.Join(f[5:], " ")
		if _, ok := seen[p]; ok {
			continue
		}
		file := filepath.Join(dir, "root", p)
		if _, err := os.Stat(file); err != nil {
			file = p
		}
		o := &procObject{path: p, file: file, name: baseName(p)}
		seen[p] = o
		proc.objects = append(proc.objects, o)
		if p == exe {
			proc.exec = o
		}
	}
	if proc.exec == nil && len(proc.objects) > 0 {
		proc.exec = proc.objects[0]
	}
	return proc, sc.Err()
}
