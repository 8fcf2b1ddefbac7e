package debuginfo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// The tests compile testdata/prog.c (the "kernel") and testdata/mod.c
// (a module, ET_REL like a .ko) and check the index against the marker
// instructions objdump finds in the result, which the index's code never
// sees.

// markers maps marker displacements to the inline function holding them.
var markers = map[uint64]string{
	0x1111: "leaf",
	0x2222: "split",
	0x3333: "mid",
	0x4444: "both",
	0x5555: "never",
	0x6666: "tail",
	0x7777: "modleaf",
}

type fixture struct {
	dir, prog, mod string
}

// build compiles the fixture with cc and flags into a new directory.
func build(t testing.TB, cc string, flags ...string) fixture {
	t.Helper()
	gcctest.Need(t, cc, "objdump", "objcopy", "nm")
	dir := t.TempDir()
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{dir: dir, prog: filepath.Join(dir, "prog"), mod: filepath.Join(dir, "mod.ko")}
	args := append([]string{"-O2", "-g", "-Wl,--build-id=sha1", "-o", f.prog, filepath.Join(src, "prog.c")}, flags...)
	gcctest.Run(t, dir, cc, args...)
	args = append([]string{"-O2", "-g", "-c", "-o", f.mod, filepath.Join(src, "mod.c")}, flags...)
	gcctest.Run(t, dir, cc, args...)
	return f
}

// site is a marker found by objdump: a symbol and an offset in it.
type site struct {
	sym string
	off uint64
}

// disassembly holds what objdump says about a file.
type disassembly struct {
	marks map[string][]site // by inline function
	code  map[string][]byte // by symbol, with the padding after it
	addr  map[string]uint64 // by symbol
	size  map[string]uint64 // by symbol, from nm
	// relocs holds the offsets of the PC-relative relocations in each
	// symbol's code (objdump -r, for a .o).
	relocs map[string][]uint64
}

var (
	symLine  = regexp.MustCompile(`^([0-9a-f]+) <([^>]+)>:$`)
	insnLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*(?:\t(.*))?$`)
	markRe   = regexp.MustCompile(`nopw\s+0x([0-9a-f]+)\(%rax,%rax,1\)`)
	relocRe  = regexp.MustCompile(`^\s+([0-9a-f]+): R_X86_64_(?:PC32|PLT32)\s`)
)

func objdump(t testing.TB, file string) disassembly {
	t.Helper()
	out, err := exec.Command("objdump", "-dr", file).Output()
	if err != nil {
		t.Fatalf("objdump -dr %s: %v", file, err)
	}
	d := disassembly{marks: map[string][]site{}, code: map[string][]byte{}, addr: map[string]uint64{}, size: map[string]uint64{},
		relocs: map[string][]uint64{}}
	nm, err := exec.Command("nm", "-S", "--defined-only", file).Output()
	if err != nil {
		t.Fatalf("nm -S %s: %v", file, err)
	}
	for _, l := range strings.Split(string(nm), "\n") {
		if f := strings.Fields(l); len(f) == 4 {
			d.size[f[3]], _ = strconv.ParseUint(f[1], 16, 64)
		}
	}
	var sym string
	var start uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := symLine.FindStringSubmatch(line); m != nil {
			sym = m[2]
			start, _ = strconv.ParseUint(m[1], 16, 64)
			d.addr[sym] = start
			continue
		}
		if m := relocRe.FindStringSubmatch(line); m != nil && sym != "" {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			d.relocs[sym] = append(d.relocs[sym], off-start)
			continue
		}
		m := insnLine.FindStringSubmatch(line)
		if m == nil || sym == "" {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		raw, err := hex.DecodeString(strings.ReplaceAll(m[2], " ", ""))
		if err != nil {
			t.Fatalf("objdump line %q: %v", line, err)
		}
		d.code[sym] = append(d.code[sym], raw...)
		if mk := markRe.FindStringSubmatch(m[3]); mk != nil {
			disp, _ := strconv.ParseUint(mk[1], 16, 64)
			if fn, ok := markers[disp]; ok {
				d.marks[fn] = append(d.marks[fn], site{sym, addr - start})
			}
		}
	}
	return d
}

// siteLines returns the lines of a source file that call fn, as marked
// by "site:fn" comments.
func siteLines(t testing.TB, file, fn string) map[int]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int]bool{}
	for i, l := range strings.Split(string(b), "\n") {
		_, comment, _ := strings.Cut(l, "/*")
		for _, w := range strings.Fields(comment) {
			if w == "site:"+fn {
				lines[i+1] = true
			}
		}
	}
	return lines
}

// checkCopies checks a function's copies in one module against the
// markers: each copy's ranges hold at least one marker of the function,
// each marker outside the function's own symbol lies in exactly one
// copy, and the call lines are the marked call sites.
func checkCopies(t *testing.T, s *Set, module, fn string, d disassembly, src string) []Copy {
	t.Helper()
	f, err := s.Lookup(fn)
	if err != nil {
		t.Fatalf("Lookup(%s): %v", fn, err)
	}
	var copies []Copy
	for _, c := range f.Copies {
		if c.Module == module {
			copies = append(copies, c)
		}
	}
	var marks []site
	for _, m := range d.marks[fn] {
		if m.sym != fn {
			marks = append(marks, m)
		}
	}
	if len(copies) != len(marks) {
		t.Errorf("%s: %d copies, %d markers outside %s: copies %+v, markers %+v", fn, len(copies), len(marks), fn, copies, marks)
	}
	// holds reports whether a copy's ranges, in symbol-relative terms,
	// contain the marker.
	holds := func(c Copy, m site) bool {
		for _, r := range c.Ranges {
			sym, ok := s.SymbolAt(module, r.Lo)
			if ok && sym.Name == m.sym && m.off >= r.Lo-sym.Addr && m.off < r.Hi-sym.Addr {
				return true
			}
		}
		return false
	}
	for _, m := range marks {
		n := 0
		for _, c := range copies {
			if holds(c, m) {
				n++
				if c.Caller != m.sym {
					t.Errorf("%s: copy at %s+%d holds marker %s+%d: caller differs", fn, c.Caller, c.Offset, m.sym, m.off)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: marker at %s+%#x lies in %d copies", fn, m.sym, m.off, n)
		}
	}
	lines := siteLines(t, src, fn)
	for _, c := range copies {
		found := false
		for _, m := range marks {
			found = found || holds(c, m)
		}
		if !found {
			t.Errorf("%s: copy at %s+%d (ranges %x) holds no marker", fn, c.Caller, c.Offset, c.Ranges)
		}
		if !lines[c.CallLine] || filepath.Base(c.CallFile) != src {
			t.Errorf("%s: copy at %s+%d called from %s:%d, want %s at one of lines %v", fn, c.Caller, c.Offset, c.CallFile, c.CallLine, src, lines)
		}
		if c.Offset != c.Entry-c.CallerAddr || c.Entry-c.CallerAddr >= c.CallerSize {
			t.Errorf("%s: copy at %s+%d: entry %#x outside caller [%#x,+%d)", fn, c.Caller, c.Offset, c.Entry, c.CallerAddr, c.CallerSize)
		}
	}
	return copies
}

func TestCopies(t *testing.T) {
	for _, tc := range []struct {
		cc    string
		flags []string
	}{
		{"gcc", []string{"-gdwarf-4"}},
		{"gcc", []string{"-gdwarf-5"}},
		{"gcc", []string{"-gdwarf-5", "-gz"}},
		{"clang", []string{"-gdwarf-4"}},
		{"clang", []string{"-gdwarf-5"}},
		{"clang", []string{"-gdwarf-5", "-gz"}},
	} {
		t.Run(tc.cc+strings.Join(tc.flags, ""), func(t *testing.T) {
			f := build(t, tc.cc, tc.flags...)
			s, err := Open(f.prog, []string{f.mod}, Options{NoCache: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			checkSet(t, s, f, tc.cc)
		})
	}
}

func checkSet(t *testing.T, s *Set, f fixture, cc string) {
	t.Helper()
	prog, mod := objdump(t, f.prog), objdump(t, f.mod)
	for _, fn := range []string{"leaf", "split", "mid", "both", "tail"} {
		copies := checkCopies(t, s, "kernel", fn, prog, "prog.c")
		if fn == "split" {
			multi := false
			for _, c := range copies {
				multi = multi || len(c.Ranges) > 1
			}
			if !multi {
				t.Errorf("split: no copy has several ranges: %+v", copies)
			}
		}
		if cc == "gcc" {
			for _, c := range copies {
				if !c.HasEntryPC {
					t.Errorf("%s: gcc copy at %s+%d without DW_AT_entry_pc", fn, c.Caller, c.Offset)
				}
			}
		}
	}
	checkCopies(t, s, "mod", "modleaf", mod, "mod.c")

	// Functions as a whole.
	sym := func(module, name string, d disassembly) Symbol {
		return Symbol{Module: module, Name: name, Addr: d.addr[name], Size: d.size[name]}
	}
	for _, tc := range []struct {
		name         string
		exists, inl  bool
		outOfLine    []Symbol
		hasCopies    bool
		modOffsetSym string // set for module symbols, whose addresses are our layout's
	}{
		{name: "never", exists: true, outOfLine: []Symbol{sym("kernel", "never", prog)}},
		{name: "both", exists: true, inl: true, outOfLine: []Symbol{sym("kernel", "both", prog)}, hasCopies: true},
		{name: "leaf", exists: true, inl: true, hasCopies: true},
		{name: "modleaf", exists: true, inl: true, hasCopies: true},
	} {
		fn, err := s.Lookup(tc.name)
		if err != nil {
			t.Errorf("Lookup(%s): %v", tc.name, err)
			continue
		}
		if fn.Exists != tc.exists || fn.Inline != tc.inl || len(fn.Copies) > 0 != tc.hasCopies {
			t.Errorf("Lookup(%s): exists %v inline %v copies %d, want %v %v %v", tc.name, fn.Exists, fn.Inline, len(fn.Copies), tc.exists, tc.inl, tc.hasCopies)
		}
		if diff := cmp.Diff(tc.outOfLine, fn.OutOfLine); diff != "" {
			t.Errorf("Lookup(%s) out of line (-want +got):\n%s", tc.name, diff)
		}
	}
	_, err := s.Lookup("no_such_function")
	var unk *UnknownFunctionError
	if !errors.As(err, &unk) || !strings.Contains(err.Error(), f.prog+" (kernel)") || !strings.Contains(err.Error(), "(mod)") {
		t.Errorf("Lookup(no_such_function) = %v, want an UnknownFunctionError naming both images", err)
	}

	// Code gives objdump's bytes, for the program and the module, the
	// module's with its PC-relative relocations applied: those to
	// symbols it does not define (modsink) reach past its code.
	for _, tc := range []struct {
		module, fn string
		d          disassembly
	}{
		{"kernel", "caller1", prog},
		{"kernel", "caller2", prog},
		{"mod", "modfunc1", mod},
		{"mod", "modfunc2", mod},
	} {
		addr, code, err := s.Code(tc.module, tc.fn)
		if err != nil {
			t.Errorf("Code(%s, %s): %v", tc.module, tc.fn, err)
			continue
		}
		want := bytes.Clone(tc.d.code[tc.fn])
		for _, off := range tc.d.relocs[tc.fn] {
			if off+4 > uint64(len(code)) || off+4 > uint64(len(want)) {
				t.Errorf("Code(%s, %s): relocation at +%#x past the code", tc.module, tc.fn, off)
				continue
			}
			copy(want[off:off+4], code[off:off+4])
			// Every relocation in the fixture ends its instruction.
			target := addr + off + 4 + uint64(int64(int32(binary.LittleEndian.Uint32(code[off:]))))
			if in, ok := s.SymbolAt(tc.module, target); ok {
				t.Errorf("Code(%s, %s): the relocation at +%#x reaches %#x, in %s", tc.module, tc.fn, off, target, in.Name)
			}
		}
		if uint64(len(code)) != tc.d.size[tc.fn] || !bytes.HasPrefix(want, code) {
			t.Errorf("Code(%s, %s) = % x, objdump says % x", tc.module, tc.fn, code, tc.d.code[tc.fn])
		}
	}
	if got, want := s.ReturnThunks("kernel"), []uint64{prog.addr["__x86_return_thunk"]}; !cmp.Equal(got, want) {
		t.Errorf("ReturnThunks = %#x, want %#x", got, want)
	}
}

// layouts of separate debug files, made with objcopy from an unstripped
// build.
func TestSeparateDebugFiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		source string
		// place moves the DWARF of image out to a debug file and returns
		// it.
		place func(t *testing.T, image, root string) string
	}{
		{"debuglink-dot-debug", SourceDebugLink, func(t *testing.T, image, root string) string {
			dbg := filepath.Join(filepath.Dir(image), ".debug", filepath.Base(image)+".dbg")
			split(t, image, dbg, true)
			return dbg
		}},
		{"debuglink-root", SourceDebugLink, func(t *testing.T, image, root string) string {
			dbg := filepath.Join(root, filepath.Dir(image), filepath.Base(image)+".dbg")
			split(t, image, dbg, true)
			return dbg
		}},
		{"build-id", sourceBuildID, func(t *testing.T, image, root string) string {
			ef, err := elffile.Open(image)
			if err != nil {
				t.Fatal(err)
			}
			id := ef.BuildID()
			ef.Close()
			if id == "" {
				t.Skip("the linker wrote no build-id")
			}
			dbg := filepath.Join(root, ".build-id", id[:2], id[2:]+".debug")
			split(t, image, dbg, false)
			return dbg
		}},
		{"freebsd", sourcePath, func(t *testing.T, image, root string) string {
			dbg := filepath.Join(root, image) + ".debug"
			split(t, image, dbg, false)
			return dbg
		}},
		{"zdebug", sourceImage, func(t *testing.T, image, root string) string {
			gcctest.Run(t, filepath.Dir(image), "objcopy", "--compress-debug-sections=zlib-gnu", image)
			return image
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := build(t, "gcc", "-gdwarf-5")
			root := t.TempDir()
			dbg := tc.place(t, f.prog, root)
			s, err := Open(f.prog, nil, Options{NoCache: true, DebugRoot: root})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			img := s.Images()[0]
			if img.DebugPath != dbg || img.Source != tc.source {
				t.Errorf("debug file %s (%s), want %s (%s)", img.DebugPath, img.Source, dbg, tc.source)
			}
			prog := objdump(t, f.prog)
			for _, fn := range []string{"leaf", "split", "both"} {
				checkCopies(t, s, "kernel", fn, prog, "prog.c")
			}
			if _, _, err := s.Code("kernel", "caller1"); err != nil {
				t.Errorf("Code: %v", err)
			}
		})
	}
}

// split moves the DWARF of image to dbg with objcopy, adding a
// .gnu_debuglink if link is set.
func split(t *testing.T, image, dbg string, link bool) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dbg), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(image)
	gcctest.Run(t, dir, "objcopy", "--only-keep-debug", image, dbg)
	if link {
		gcctest.Run(t, dir, "objcopy", "--strip-debug", "--add-gnu-debuglink="+dbg, image)
	} else {
		gcctest.Run(t, dir, "objcopy", "--strip-debug", image)
	}
}

func TestMismatchedDebugFile(t *testing.T) {
	f := build(t, "gcc", "-gdwarf-5")
	dbg := filepath.Join(f.dir, "prog.debug")
	split(t, f.prog, dbg, true)
	modDbg := filepath.Join(f.dir, "mod.debug")
	split(t, f.mod, modDbg, true)
	// Appending a byte changes the CRC and leaves a valid ELF file.
	for _, p := range []string{dbg, modDbg} {
		fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.Write([]byte{0})
		fh.Close()
	}
	var warnings []Warning
	opts := Options{NoCache: true, DebugRoot: t.TempDir(), Warn: func(w Warning) { warnings = append(warnings, w) }}
	_, err := Open(f.prog, nil, opts)
	var mm *MismatchError
	if !errors.As(err, &mm) || mm.Image != f.prog || mm.DebugFile != dbg {
		t.Fatalf("Open with a stale debug file: %v, want a MismatchError naming %s and %s", err, f.prog, dbg)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), f.prog) || !strings.Contains(warnings[0].Error(), dbg) {
		t.Errorf("warnings %v, want one naming %s and %s", warnings, f.prog, dbg)
	}

	// A module that does not match is skipped; the kernel still opens.
	g := build(t, "gcc", "-gdwarf-5")
	warnings = nil
	s, err := Open(g.prog, []string{f.mod}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(s.Images()); n != 1 {
		t.Errorf("%d images, want the kernel only", n)
	}
	if len(s.Warnings()) != 1 || !strings.Contains(s.Warnings()[0].Error(), modDbg) {
		t.Errorf("set warnings %v, want one naming %s", s.Warnings(), modDbg)
	}
}

func TestNoDebugInfo(t *testing.T) {
	f := build(t, "gcc", "-gdwarf-5")
	gcctest.Run(t, f.dir, "objcopy", "--strip-debug", f.prog)
	root := t.TempDir()
	_, err := Open(f.prog, nil, Options{NoCache: true, DebugRoot: root})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Open of a stripped file: %v, want a NotFoundError", err)
	}
	for _, want := range []string{f.prog + " (no DWARF)", filepath.Join(root, ".build-id"), filepath.Join(root, f.prog) + ".debug"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestCache(t *testing.T) {
	f := build(t, "gcc", "-gdwarf-5")
	var warnings []string
	opts := Options{CacheDir: t.TempDir(), Warn: func(w Warning) { warnings = append(warnings, w.Error()) }}
	open := func() (*Set, bool) {
		t.Helper()
		s, err := Open(f.prog, []string{f.mod}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		imgs := s.Images()
		if imgs[0].Cached != imgs[1].Cached {
			t.Fatalf("kernel cached %v, module cached %v", imgs[0].Cached, imgs[1].Cached)
		}
		return s, imgs[0].Cached
	}
	lookups := func(s *Set) []function {
		var out []function
		for _, name := range []string{"leaf", "split", "both", "never", "modleaf", "caller1", "modfunc2"} {
			fn, err := s.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fn)
		}
		return out
	}

	s, cached := open()
	if cached {
		t.Fatal("first open used a cache")
	}
	want := lookups(s)
	s, cached = open()
	if !cached {
		t.Fatal("second open did not use the cache")
	}
	if diff := cmp.Diff(want, lookups(s), cmp.AllowUnexported(Copy{})); diff != "" {
		t.Errorf("lookups from the cache differ (-built +cached):\n%s", diff)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}

	// Corrupt each cache file in the middle: both are rebuilt, with a
	// warning, and then used again.
	files, _ := filepath.Glob(filepath.Join(opts.CacheDir, "*.idx"))
	if len(files) != 2 {
		t.Fatalf("cache files %v, want 2", files)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x55
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s, cached = open(); cached {
		t.Fatal("a corrupt cache was used")
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "checksum mismatch") {
		t.Errorf("warnings %q, want two checksum mismatches", warnings)
	}
	if diff := cmp.Diff(want, lookups(s), cmp.AllowUnexported(Copy{})); diff != "" {
		t.Errorf("lookups after rebuild differ (-first +rebuilt):\n%s", diff)
	}
	if _, cached = open(); !cached {
		t.Fatal("the rebuilt cache was not used")
	}

	// A changed input makes the cache stale, silently.
	warnings = nil
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.prog, later, later); err != nil {
		t.Fatal(err)
	}
	s, err := Open(f.prog, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Images()[0].Cached || len(warnings) != 0 {
		t.Errorf("after touching the image: cached %v, warnings %q; want a silent rebuild", s.Images()[0].Cached, warnings)
	}

	// A truncated file is rejected too.
	for _, p := range files {
		if err := os.Truncate(p, 100); err != nil {
			t.Fatal(err)
		}
	}
	if _, cached = open(); cached {
		t.Fatal("a truncated cache was used")
	}
}

// TestCacheProcessRoot opens a program as kdtrace -c and -p do, through
// the root of the process running it (/proc/PID/root), in two processes
// one after the other: the second finds the index the first cached.
func TestCacheProcessRoot(t *testing.T) {
	f := build(t, "gcc", "-gdwarf-5")
	abs, err := filepath.Abs(f.prog)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{CacheDir: t.TempDir(), Warn: func(w Warning) { t.Error(w) }}
	var want []Copy
	for i, pid := range []int{os.Getpid(), startProcess(t)} {
		path := fmt.Sprintf("/proc/%d/root%s", pid, abs)
		img, err := OpenImage(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if img.Cached != (i == 1) || img.DebugPath != path {
			t.Errorf("%s: cached %v, debug file %s; want %v and the image", path, img.Cached, img.DebugPath, i == 1)
		}
		fn, err := NewSet(img).Lookup("leaf")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = fn.Copies
		} else if diff := cmp.Diff(want, fn.Copies, cmp.AllowUnexported(Copy{})); diff != "" {
			t.Errorf("copies from the cache differ (-built +cached):\n%s", diff)
		}
		img.Close()
	}
}

// startProcess starts a process that waits to be killed, and kills it,
// by its PID, when the test ends.
func startProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

func BenchmarkBuildIndex(b *testing.B) {
	f := build(b, "gcc", "-gdwarf-5")
	b.ResetTimer()
	for b.Loop() {
		img, err := OpenImage(f.prog, Options{NoCache: true})
		if err != nil {
			b.Fatal(err)
		}
		img.Close()
	}
}

// BenchmarkVmlinux indexes the kernel named by $KDTRACE_VMLINUX, e.g. the
// vmlinux of Debian's linux-image-amd64-dbg (bench/kinst-index.sh).
func BenchmarkVmlinux(b *testing.B) {
	path := os.Getenv("KDTRACE_VMLINUX")
	if path == "" {
		b.Skip("KDTRACE_VMLINUX not set")
	}
	for b.Loop() {
		img, err := OpenImage(path, Options{NoCache: true})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(img.Stats.Copies), "copies")
		img.Close()
	}
}

func ExampleSet_Lookup() {
	s, err := Open("/usr/lib/debug/boot/vmlinux-6.1.0-56-amd64", nil, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fn, err := s.Lookup("get_current")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range fn.Copies {
		fmt.Printf("kinst::%s:%d\n", c.Caller, c.Offset)
	}
}

// TestCheckFile checks that a file that cannot be an image says what it
// is not, naming it, rather than debug/elf's text.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "passwd")
	os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("\x7fE"), 0o644)
	exe, err := os.Executable() // the test binary is an ELF file here
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // the error's text; "" for none
		is   error
	}{
		{text, text + ": not an ELF file", ErrNotELF},
		{short, short + ": not an ELF file", ErrNotELF},
		{dir, dir + ": is a directory", nil},
		{filepath.Join(dir, "none"), filepath.Join(dir, "none") + ": no such file or directory", os.ErrNotExist},
		{exe, "", nil},
	}
	for _, tt := range tests {
		err := CheckFile(tt.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want || tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("CheckFile(%s) = %q, want %q (is %v)", tt.path, got, tt.want, tt.is)
		}
	}
}
