package symbolize

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// A Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64 // in the file
	Dev        string // the file's device, "fe:01"
	Inode      uint64
	// Path is the file mapped, or a pseudo-path ("[heap]", "[vdso]"),
	// or "" for anonymous memory.
	Path string
	// Deleted says that the file was removed after it was mapped
	// (Linux appends " (deleted)" to Path, which Path drops).
	Deleted bool
}

// File reports whether m maps a file.
func (m Mapping) File() bool { return strings.HasPrefix(m.Path, "/") }

const deletedSuffix = " (deleted)"

// ParseMaps parses the text of /proc/PID/maps:
//
//	55d4c8a2e000-55d4c8a32000 r-xp 00002000 fe:01 1234    /usr/bin/sleep
//
// A path may hold spaces; it starts after the blanks that follow the
// inode.
func ParseMaps(data []byte) ([]Mapping, error) {
	var maps []Mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		m, err := parseMapping(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v: %q", n, err, line)
		}
		maps = append(maps, m)
	}
	return maps, sc.Err()
}

func parseMapping(line string) (Mapping, error) {
	var m Mapping
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i < 4 {
				return m, fmt.Errorf("%d fields, not 5", i+1)
			}
			j = len(rest)
		}
		f[i], rest = rest[:j], rest[j:]
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	var err1, err2, err3, err4 error
	m.Start, err1 = strconv.ParseUint(lo, 16, 64)
	m.End, err2 = strconv.ParseUint(hi, 16, 64)
	m.Offset, err3 = strconv.ParseUint(f[2], 16, 64)
	m.Inode, err4 = strconv.ParseUint(f[4], 10, 64)
	switch {
	case !ok || err1 != nil || err2 != nil || m.End < m.Start:
		return m, fmt.Errorf("bad address range %q", f[0])
	case len(f[1]) != 4:
		return m, fmt.Errorf("bad permissions %q", f[1])
	case err3 != nil:
		return m, fmt.Errorf("bad offset %q", f[2])
	case err4 != nil:
		return m, fmt.Errorf("bad inode %q", f[4])
	}
	m.Perms, m.Dev = f[1], f[3]
	m.Path = strings.TrimLeft(rest, " ")
	if m.File() && strings.HasSuffix(m.Path, deletedSuffix) {
		m.Path, m.Deleted = strings.TrimSuffix(m.Path, deletedSuffix), true
	}
	return m, nil
}
