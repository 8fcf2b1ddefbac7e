package dwarftypes

import (
	"debug/elf"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// The locals tests compile testdata/locals.c, whose asm labels mark
// the addresses probed (mark_entry after work's prologue, mark_loop in
// its loop, mark_inline in the copy of scale inlined into it,
// mark_return before it returns), with each compiler, optimisation
// (-O0, -O2, -O3) and DWARF version, and compare the scope at each mark
// with what gdb's info scope says is available there.

// localsMarks are the labels and the locals that must be in scope at
// each, with the inlined function declaring the first of them.
var localsMarks = []struct {
	mark    string
	names   []string
	inlined string // of names[0]
}{
	{"mark_entry", []string{"sum", "r", "n"}, ""},
	{"mark_loop", []string{"sq", "i", "sum", "r", "n"}, ""},
	{"mark_inline", []string{"v", "r", "k", "sum", "n"}, "scale"},
	{"mark_return", []string{"sum", "r", "n"}, ""},
}

func TestScope(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's asm labels are amd64's")
	}
	src, err := filepath.Abs("testdata/locals.c")
	if err != nil {
		t.Fatal(err)
	}
	gdb, gdbErr := exec.LookPath("gdb")
	for _, cc := range []string{"gcc", "clang"} {
		for _, opt := range []string{"-O0", "-O2", "-O3"} {
			for _, dw := range []string{"-gdwarf-4", "-gdwarf-5"} {
				name := cc + opt + dw
				t.Run(name, func(t *testing.T) {
					if _, err := exec.LookPath(cc); err != nil {
						t.Skipf("%s not installed: %v", cc, err)
					}
					prog := filepath.Join(t.TempDir(), "locals")
					args := []string{opt, "-g", dw, "-fno-pie", "-no-pie", "-fcf-protection=none", "-o", prog, src}
					if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
						t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
					}
					marks := markAddrs(t, prog)
					ty, err := OpenFile(prog, "locals")
					if err != nil {
						t.Fatal(err)
					}
					defer ty.Close()
					var ours, theirs, both int
					for _, m := range localsMarks {
						pc := marks[m.mark]
						sc, err := ty.Scope(pc)
						if err != nil {
							t.Fatalf("%s: %v", m.mark, err)
						}
						checkScope(t, m.mark, sc, m.names, m.inlined, opt == "-O0")
						t.Logf("%s %#x (work+%#x): frame base %s", m.mark, pc, pc-sc.Low, sc.FrameBase)
						for _, l := range sc.Locals {
							t.Logf("\t%s%s %s: %s %v", l.Inlined+"/", l.Name, l.Type, l.Loc, l.Available)
						}
						for _, l := range sc.Locals {
							if len(l.Loc) > 0 {
								ours++
							}
						}
						if gdbErr != nil {
							continue
						}
						avail, err := gdbScope(gdb, prog, pc)
						if err != nil {
							t.Fatalf("%s: %v", m.mark, err)
						}
						for name, kind := range avail {
							theirs++
							l, ok := sc.Lookup(name)
							if !ok || len(l.Loc) == 0 {
								t.Errorf("%s: gdb reads %s (%s), we have %+v", m.mark, name, kind, l)
								continue
							}
							both++
							if strings.HasPrefix(kind, "a variable in $") && !(len(l.Loc) == 1 && l.Loc[0].Code == dwarfexpr.OpReg) {
								t.Errorf("%s: gdb has %s %s, we have %s", m.mark, name, kind, l.Loc)
							}
						}
					}
					if gdbErr != nil {
						t.Logf("no gdb (%v): kdtrace reads %d locals at the marks", gdbErr, ours)
						return
					}
					t.Logf("locals readable at the 4 marks: kdtrace %d, gdb %d, gdb's that kdtrace reads %d of %d", ours, theirs, both, theirs)
				})
			}
		}
	}
}

// checkScope checks that names are in sc, the first declared by
// inlined, and at -O0 that work's own are on the frame.
func checkScope(t *testing.T, mark string, sc *Scope, names []string, inlined string, o0 bool) {
	t.Helper()
	if sc.Function != "work" {
		t.Errorf("%s: function %q, want work", mark, sc.Function)
	}
	if len(sc.FrameBase) == 0 {
		t.Errorf("%s: no frame base", mark)
	}
	// A copy's variable is there once, whether its DIE is the copy's
	// or only its origin's.
	seen := map[string]bool{}
	for _, l := range sc.Locals {
		if k := l.Inlined + "/" + l.Name; seen[k] {
			t.Errorf("%s: %s twice in %v", mark, k, localNames(sc))
		} else {
			seen[k] = true
		}
	}
	for i, n := range names {
		l, ok := sc.Lookup(n)
		if !ok {
			t.Errorf("%s: %s not in scope; have %v", mark, n, localNames(sc))
			continue
		}
		if l.Type == nil {
			t.Errorf("%s: %s has no type: %v", mark, n, l.TypeErr)
		}
		if i == 0 && l.Inlined != inlined {
			t.Errorf("%s: %s declared in %q, want %q", mark, n, l.Inlined, inlined)
		}
		if o0 && l.Inlined == "" && (len(l.Loc) != 1 || l.Loc[0].Code != dwarfexpr.OpFbreg) {
			t.Errorf("%s: %s at -O0 is at %s, want on the frame", mark, n, l.Loc)
		}
	}
	// A location list gives a location at PC exactly when one of its
	// ranges holds PC.
	for _, l := range sc.Locals {
		off := sc.PC - sc.Low
		in := slices.ContainsFunc(l.Available, func(r debuginfo.Range) bool { return r.Lo <= off && off < r.Hi })
		if l.List && in != (len(l.Loc) > 0) {
			t.Errorf("%s: %s/%s at %s, available at %v", mark, l.Inlined, l.Name, l.Loc, l.Available)
		}
	}
	if l, ok := sc.Lookup("r"); ok && l.Type != nil {
		if got := l.Type.String(); got != "struct req *" {
			t.Errorf("%s: r is %s, want struct req *", mark, got)
		}
	}
}

func localNames(sc *Scope) []string {
	var s []string
	for _, l := range sc.Locals {
		s = append(s, l.Name)
	}
	return s
}

func markAddrs(t *testing.T, prog string) map[string]uint64 {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]uint64{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "mark_") {
			m[s.Name] = s.Value
		}
	}
	for _, x := range localsMarks {
		if _, ok := m[x.mark]; !ok {
			t.Fatalf("no symbol %s in %s", x.mark, prog)
		}
	}
	return m
}

var (
	gdbSymbol = regexp.MustCompile(`^Symbol (\S+) is (.*)$`)
	gdbRange  = regexp.MustCompile(`Range 0x([0-9a-f]+)-0x([0-9a-f]+): (.*)$`)
)

// gdbScope runs gdb's info scope at pc and returns the symbols gdb
// can read there with how it describes their location.
func gdbScope(gdb, prog string, pc uint64) (map[string]string, error) {
	out, err := exec.Command(gdb, "-batch", "-nx", "-ex", "info scope *0x"+strconv.FormatUint(pc, 16), prog).CombinedOutput()
	if err != nil {
		return nil, errors.New(string(out))
	}
	avail := map[string]string{}
	cur := ""
	for line := range strings.SplitSeq(string(out), "\n") {
		if m := gdbSymbol.FindStringSubmatch(line); m != nil {
			cur = ""
			switch desc := m[2]; {
			case strings.HasPrefix(desc, "multi-location"):
				cur = m[1]
			case strings.HasPrefix(desc, "a function"), strings.HasPrefix(desc, "optimized out"):
			default:
				avail[m[1]] = strings.TrimSuffix(desc, ".")
			}
			continue
		}
		if m := gdbRange.FindStringSubmatch(line); m != nil && cur != "" {
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			if lo <= pc && pc < hi && !strings.Contains(m[3], "optimized out") {
				avail[cur] = m[3]
			}
		}
	}
	return avail, nil
}

func TestDecodeExpr(t *testing.T) {
	secs := &dwarfread.DwarfSections{Addr: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x20, 0x40, 0, 0, 0, 0, 0}}
	u := &dwarfread.UnitCtx{Unit: &dwarfread.Unit{Vers: 5, AddrSize: 8}, AddrBase: 0}
	for _, tt := range []struct {
		name string
		in   []byte
		want string
	}{
		{"fbreg", []byte{0x91, 0x6c}, "DW_OP_fbreg -20"},
		{"reg and piece", []byte{0x50, 0x93, 0x04, 0x53, 0x93, 0x04}, "DW_OP_reg0; DW_OP_piece 4; DW_OP_reg3; DW_OP_piece 4"},
		{"regx", []byte{0x90, 0x11}, "DW_OP_reg17"},
		{"breg", []byte{0x77, 0x08, 0x06}, "DW_OP_breg7 8; DW_OP_deref"},
		{"bregx", []byte{0x92, 0x10, 0x7f}, "DW_OP_breg16 -1"},
		{"addr", []byte{0x03, 0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0}, "DW_OP_addr 0x12345678"},
		{"addrx", []byte{0xa1, 0x01}, "DW_OP_addr 0x402010"},
		{"constants", []byte{0x30, 0x4f, 0x08, 0xff, 0x09, 0xff, 0x0b, 0x00, 0x80, 0x10, 0x80, 0x01, 0x11, 0x40}, "DW_OP_lit0; DW_OP_lit31; DW_OP_constu 255; DW_OP_consts -1; DW_OP_consts -32768; DW_OP_constu 128; DW_OP_consts -64"},
		{"arithmetic", []byte{0x71, 0x00, 0x12, 0x1e, 0x23, 0x03, 0x9f}, "DW_OP_breg1 0; DW_OP_dup; DW_OP_mul; DW_OP_plus_uconst 3; DW_OP_stack_value"},
		{"implicit value", []byte{0x9e, 0x02, 0x34, 0x12}, "DW_OP_implicit_value 2 34 12"},
		{"entry value", []byte{0xa3, 0x01, 0x54, 0x9f}, "DW_OP_entry_value (DW_OP_reg4); DW_OP_stack_value"},
		{"GNU entry value", []byte{0xf3, 0x01, 0x55, 0x9f}, "DW_OP_entry_value (DW_OP_reg5); DW_OP_stack_value"},
		{"deref_size", []byte{0x75, 0x00, 0x94, 0x04}, "DW_OP_breg5 0; DW_OP_deref_size 4"},
		{"bit_piece", []byte{0x50, 0x9d, 0x03, 0x05}, "DW_OP_reg0; DW_OP_bit_piece 3 5"},
		{"typed", []byte{0xf5, 0x11, 0x2a, 0xa6, 0x08, 0x2a, 0xa4, 0x2a, 0x02, 0x01, 0x02, 0xa8, 0x00, 0x9f}, "DW_OP_regval_type 17 <0x2a>; DW_OP_deref_type 8 <0x2a>; DW_OP_const_type <0x2a> 01 02; DW_OP_convert <0x0>; DW_OP_stack_value"},
		{"tls", []byte{0x0e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0xe0}, "DW_OP_constu 16; DW_OP_form_tls_address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := dwarfread.DecodeExpr(secs, tt.in, u)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, bad := range [][]byte{{0x91}, {0x9e, 0x05, 0x01}, {0xa3, 0x09, 0x50}, {0xe5}, {0xa1, 0x09}} {
		if e, err := dwarfread.DecodeExpr(secs, bad, u); err == nil {
			t.Errorf("% x decoded as %s, want an error", bad, e)
		}
	}
}

// TestScopeVmlinux reads the locals at vfs_read's entry in a kernel, and
// logs how long the first and a second scope take.
func TestScopeVmlinux(t *testing.T) {
	path := vmlinuxPath()
	if path == "" {
		t.Skip("no vmlinux with DWARF: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "vfs_read" })
	if i < 0 {
		t.Skip("no vfs_read in " + path)
	}
	ty, err := OpenFile(path, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	for _, run := range []string{"cold", "warm"} {
		start := time.Now()
		sc, err := ty.Scope(syms[i].Value)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s, %d locals in %v", run, sc.Function, len(sc.Locals), time.Since(start))
		l, ok := sc.Lookup("count")
		if !ok || !l.Param || l.Type == nil || len(l.Loc) == 0 {
			t.Fatalf("count at vfs_read's entry: %+v", l)
		}
		if sc.Function != "vfs_read" {
			t.Errorf("function %q, want vfs_read", sc.Function)
		}
	}
}

// TestScopeAbstractOnly: the parameters and variables of an inlined
// function that its copy has no DIE of are in scope at the copy's
// entry, without a location, typed from the abstract origin.
func TestScopeAbstractOnly(t *testing.T) {
	src, err := filepath.Abs("testdata/abstract.c")
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			if _, err := exec.LookPath(cc); err != nil {
				t.Skipf("%s not installed: %v", cc, err)
			}
			prog := filepath.Join(t.TempDir(), "abstract")
			if out, err := exec.Command(cc, "-O2", "-g", "-o", prog, src).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cc, err, out)
			}
			f, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			syms, _ := f.Symbols()
			f.Close()
			i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "g" })
			ty, err := OpenFile(prog, "abstract")
			if err != nil {
				t.Fatal(err)
			}
			defer ty.Close()
			sc, err := ty.Scope(syms[i].Value)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, l := range sc.Locals {
				names = append(names, l.Inlined+"/"+l.Name)
				if l.Inlined == "f" && l.Type == nil {
					t.Errorf("%s: no type: %v", l.Name, l.TypeErr)
				}
			}
			for _, want := range []string{"f/unused", "f/x", "f/t", "/a"} {
				if !slices.Contains(names, want) {
					t.Errorf("%s not in scope at g's entry: %v", want, names)
				}
			}
		})
	}
}
