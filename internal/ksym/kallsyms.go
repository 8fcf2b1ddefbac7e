package ksym

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadKallsyms reads a table in /proc/kallsyms's format:
//
//	ffffffff816d5b70 T vfs_read
//	ffffffffc0a1b000 t ext4_file_open	[ext4]
//
// Lowercase types are local symbols; T, t, W and w are functions, the
// rest data. Lines that do not parse are an error naming the line.
func ReadKallsyms(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parseKallsyms(data)
}

// Kallsyms reads the kallsyms file at path (/proc/kallsyms for the
// running kernel). Code reads functions through the kcore file at kcore
// (/proc/kcore), opened on first use; "" gives a table without code.
func Kallsyms(path, kcore string) (*Table, error) {
	data, err := readProc(path)
	if err != nil {
		return nil, err
	}
	t, err := parseKallsyms(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.source = path
	if kcore != "" {
		k := &kcoreFile{path: kcore}
		t.text = k.read
	}
	return t, nil
}

func parseKallsyms(data []byte) (*Table, error) {
	// One string holds every name, so that entries share it instead of
	// each allocating its own.
	text := string(data)
	b := newBuilder(bytes.Count(data, []byte{'\n'}) + 1)
	mod := uint16(0)
	modName := KernelModule
	line := 0
	for off := 0; off < len(text); {
		line++
		end := len(text)
		if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
			end = off + i
		}
		l := text[off:end]
		off = end + 1
		if l == "" {
			continue
		}
		addr, n := hexPrefix(l)
		if n == 0 || n+3 > len(l) || l[n] != ' ' || l[n+2] != ' ' {
			return nil, fmt.Errorf("line %d: not a kallsyms line: %q", line, l)
		}
		typ := l[n+1]
		rest := l[n+3:]
		name, m := rest, modName
		if i := strings.IndexByte(rest, '\t'); i >= 0 {
			name = rest[:i]
			tag := rest[i+1:]
			if len(tag) < 3 || tag[0] != '[' || tag[len(tag)-1] != ']' {
				return nil, fmt.Errorf("line %d: bad module field %q", line, tag)
			}
			m = tag[1 : len(tag)-1]
		} else {
			m = KernelModule
		}
		if name == "" {
			return nil, fmt.Errorf("line %d: no symbol name", line)
		}
		if typ == 'U' || typ == 'u' {
			continue
		}
		if m != modName {
			var err error
			if mod, err = b.module(m); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			modName = m
		}
		b.add(entry{name: name, addr: addr, mod: mod, fn: typ == 'T' || typ == 't' || typ == 'W' || typ == 'w'})
	}
	t := b.build()
	t.source = "kallsyms"
	t.hint = " (without CONFIG_KALLSYMS_ALL the kernel lists only its functions there)"
	return t, nil
}

// hexPrefix parses the hexadecimal number at the start of s and returns
// it with the number of digits.
func hexPrefix(s string) (uint64, int) {
	var v uint64
	i := 0
	for ; i < len(s) && i < 16; i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return v, i
		}
	}
	return v, i
}

// readProc reads a file whose size stat does not tell (procfs says 0),
// in large reads: /proc/kallsyms gives at most a buffer per read, and
// os.ReadFile's first buffers are small.
func readProc(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, 8<<20)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
