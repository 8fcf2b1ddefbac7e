package vm_test

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
)

// null is a zero address passed by value.
type null struct{}

// callObject builds a DIFO that calls subr with args: a string is pushed
// by reference from the string table, an integer or null by value.
func callObject(t *testing.T, subr uint16, args ...any) *dif.Object {
	t.Helper()
	return build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		for _, a := range args {
			switch a := a.(type) {
			case string:
				ir.Sets(a, 1)
				ir.Emit(dif.Pushtr(dif.TypeString, 0, 1))
			case null:
				ir.Emit(dif.Pushtv(dif.TypeCTF, 0))
			case int, rune:
				ir.Setx(uint64(toInt(a)), 1)
				ir.Emit(dif.Pushtv(dif.TypeCTF, 1))
			case uint64:
				ir.Setx(a, 1)
				ir.Emit(dif.Pushtv(dif.TypeCTF, 1))
			default:
				t.Fatalf("argument %T", a)
			}
		}
		ir.Emit(dif.Call(subr, 2))
		ir.Emit(dif.Ret(2))
	})
}

func toInt(a any) int64 {
	if r, ok := a.(rune); ok {
		return int64(r)
	}
	return int64(a.(int))
}

// str is a string result; num an integer one.
type result struct {
	str  string
	num  int64
	isS  bool
	null bool
}

func str(s string) result { return result{str: s, isS: true} }
func num(n int64) result  { return result{num: n} }
func nullResult() result  { return result{null: true} }
func (r result) String() string {
	switch {
	case r.null:
		return "NULL"
	case r.isS:
		return strconv.Quote(r.str)
	}
	return strconv.FormatInt(r.num, 10)
}

func TestSubroutines(t *testing.T) {
	const mem = 0xffff_fe00_0000_0000
	kmem := vm.Segments{
		{Addr: mem, Data: []byte{10, 1, 2, 3}},
		{Addr: mem + 0x10, Data: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{Addr: mem + 0x20, Data: []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x14, 0x4f, 0xff, 0xfe, 0x0b, 0x76, 0xc8}},
		{Addr: mem + 0x30, Data: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3}},
		{Addr: mem + 0x40, Data: []byte{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}},
		{Addr: mem + 0x50, Data: []byte("a\x00b\x00c")},
		{Addr: mem + 0x60, Data: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 192, 168, 0, 1}},
	}
	tests := []struct {
		subr uint16
		args []any
		want result
	}{
		{dif.SubrStrlen, []any{"hello"}, num(5)},
		{dif.SubrStrlen, []any{""}, num(0)},
		{dif.SubrStrjoin, []any{"ab", "cd"}, str("abcd")},
		{dif.SubrStrjoin, []any{"", ""}, str("")},

		{dif.SubrSubstr, []any{"hello", 1}, str("ello")},
		{dif.SubrSubstr, []any{"hello", 1, 3}, str("ell")},
		{dif.SubrSubstr, []any{"hello", -3}, str("llo")},
		{dif.SubrSubstr, []any{"hello", -3, 2}, str("ll")},
		{dif.SubrSubstr, []any{"hello", 0, -1}, str("hell")},
		{dif.SubrSubstr, []any{"hello", -10, 7}, str("he")},
		{dif.SubrSubstr, []any{"hello", 10}, str("")},
		{dif.SubrSubstr, []any{"hello", 2, -10}, str("")},

		{dif.SubrIndex, []any{"hello", "l"}, num(2)},
		{dif.SubrIndex, []any{"hello", "lo"}, num(3)},
		{dif.SubrIndex, []any{"hello", "l", 3}, num(3)},
		{dif.SubrIndex, []any{"hello", "l", 4}, num(-1)},
		{dif.SubrIndex, []any{"hello", "l", -4}, num(2)},
		{dif.SubrIndex, []any{"hello", "", 2}, num(2)},
		{dif.SubrIndex, []any{"hello", "", 9}, num(5)},
		{dif.SubrIndex, []any{"hello", "hello!"}, num(-1)},
		{dif.SubrIndex, []any{"", ""}, num(0)},
		{dif.SubrRindex, []any{"hello", "l"}, num(3)},
		{dif.SubrRindex, []any{"hello", "h"}, num(0)},
		{dif.SubrRindex, []any{"hello", "l", 2}, num(2)},
		{dif.SubrRindex, []any{"hello", "l", 1}, num(-1)},
		{dif.SubrRindex, []any{"hello", "l", -1}, num(-1)},
		{dif.SubrRindex, []any{"hello", "", -1}, num(0)},
		{dif.SubrRindex, []any{"hello", "", 99}, num(5)},

		{dif.SubrStrchr, []any{"hello", 'l'}, str("llo")},
		{dif.SubrStrrchr, []any{"hello", 'l'}, str("lo")},
		{dif.SubrStrchr, []any{"hello", 'z'}, nullResult()},
		{dif.SubrStrchr, []any{"hello", 0}, str("")},
		{dif.SubrStrstr, []any{"hello", "ll"}, str("llo")},
		{dif.SubrStrstr, []any{"hello", "z"}, nullResult()},
		{dif.SubrStrstr, []any{"hello", ""}, str("hello")},
		{dif.SubrStrstr, []any{"", ""}, str("")},

		{dif.SubrToupper, []any{"Hello, World 1"}, str("HELLO, WORLD 1")},
		{dif.SubrTolower, []any{"Hello, World 1"}, str("hello, world 1")},

		{dif.SubrLltostr, []any{0}, str("0")},
		{dif.SubrLltostr, []any{-5}, str("-5")},
		{dif.SubrLltostr, []any{math.MinInt64}, str("-9223372036854775808")},
		{dif.SubrLltostr, []any{255, 16}, str("0xff")},
		{dif.SubrLltostr, []any{0, 16}, str("0x0")},
		{dif.SubrLltostr, []any{-1, 16}, str("0xffffffffffffffff")},
		{dif.SubrLltostr, []any{8, 8}, str("010")},
		{dif.SubrLltostr, []any{0, 8}, str("0")},
		{dif.SubrLltostr, []any{5, 2}, str("101")},
		{dif.SubrLltostr, []any{35, 36}, str("z")},

		{dif.SubrStrtoll, []any{"123"}, num(123)},
		{dif.SubrStrtoll, []any{"  42abc"}, num(42)},
		{dif.SubrStrtoll, []any{"\t+7"}, num(7)},
		{dif.SubrStrtoll, []any{"-0x1f", 16}, num(-31)},
		{dif.SubrStrtoll, []any{"0x", 16}, num(0)},
		{dif.SubrStrtoll, []any{"ff", 16}, num(255)},
		{dif.SubrStrtoll, []any{"777", 8}, num(511)},
		{dif.SubrStrtoll, []any{"z", 36}, num(35)},
		{dif.SubrStrtoll, []any{"Zz!", 36}, num(35*36 + 35)},
		{dif.SubrStrtoll, []any{""}, num(0)},

		{dif.SubrHtons, []any{0x1234}, num(0x3412)},
		{dif.SubrNtohs, []any{0xabcd1234}, num(0x3412)},
		{dif.SubrHtonl, []any{0x11223344}, num(0x44332211)},
		{dif.SubrNtohl, []any{0x11223344}, num(0x44332211)},
		{dif.SubrHtonll, []any{0x0102030405060708}, num(0x0807060504030201)},
		{dif.SubrNtohll, []any{0x0102030405060708}, num(0x0807060504030201)},

		{dif.SubrCleanpath, []any{"/a/b/../c"}, str("/a/c")},
		{dif.SubrCleanpath, []any{"//a///b"}, str("/a/b")},
		{dif.SubrCleanpath, []any{"/a/./b/."}, str("/a/b/.")},
		{dif.SubrCleanpath, []any{"/a/b/.."}, str("/a/")},
		{dif.SubrCleanpath, []any{"/a/..b/.c"}, str("/a/..b/.c")},
		{dif.SubrCleanpath, []any{"a/b"}, str("a/b")},

		{dif.SubrInetNtoa, []any{uint64(mem)}, str("10.1.2.3")},
		{dif.SubrInetNtop, []any{2, uint64(mem)}, str("10.1.2.3")},
		{dif.SubrInetNtop, []any{28, uint64(mem + 0x10)}, str("::1")},
		{dif.SubrInetNtop, []any{28, uint64(mem + 0x20)}, str("fe80::214:4fff:fe0b:76c8")},
		{dif.SubrInetNtop, []any{28, uint64(mem + 0x30)}, str("::ffff:10.1.2.3")},
		{dif.SubrInetNtop, []any{28, uint64(mem + 0x40)}, str("1:2:3:4:5:6:7:8")},
		{dif.SubrInetNtop, []any{28, uint64(mem + 0x60)}, str("::192.168.0.1")},
		{dif.SubrInetNtoa6, []any{uint64(mem + 0x30)}, str("10.1.2.3")},
		{dif.SubrInetNtoa6, []any{uint64(mem + 0x20)}, str("fe80::214:4fff:fe0b:76c8")},

		{dif.SubrMemstr, []any{uint64(mem + 0x50), ' ', 6}, str("a b c")},
		{dif.SubrMemstr, []any{uint64(mem + 0x50), ' ', 0}, nullResult()},

		{dif.SubrJSON, []any{`{"a": 1024}`, "a"}, str("1024")},
		{dif.SubrJSON, []any{`{"a": -1.5e3, "b": 2}`, "a"}, str("-1.5e3")},
		{dif.SubrJSON, []any{`{"a": "hel\"lo"}`, "a"}, str(`hel\"lo`)},
		{dif.SubrJSON, []any{`{"a": {"b": true}}`, "a.b"}, str("true")},
		{dif.SubrJSON, []any{`{"x": 1, "a": {"y": 2, "b": null}}`, "a.b"}, str("null")},
		{dif.SubrJSON, []any{`[1, 2, 3]`, "[1]"}, str("2")},
		{dif.SubrJSON, []any{`{"a": [1, {"c": "\u00e9"}]}`, "a[1].c"}, str(`\u00e9`)},
		{dif.SubrJSON, []any{`{"a": {"b": [1, "]"]}, "c": 3}`, "a"}, str(`{"b": [1, "]"]}`)},
		{dif.SubrJSON, []any{`{"a": {"b": [1]}, "c": 3}`, "c"}, str("3")},
		{dif.SubrJSON, []any{`{"a": 1}`, "b"}, nullResult()},
		{dif.SubrJSON, []any{`{"a": 1}`, "a.b"}, nullResult()},
		{dif.SubrJSON, []any{`nope`, "a"}, nullResult()},
	}
	// basename and dirname as dtrace's own tests have them.
	for _, c := range []struct{ path, dir, base string }{
		{"/foo/bar/baz", "/foo/bar", "baz"},
		{"/foo/bar///baz/", "/foo/bar", "baz"},
		{"/foo/bar/baz/", "/foo/bar", "baz"},
		{"/foo/bar/baz//", "/foo/bar", "baz"},
		{"/foo/bar/baz/.", "/foo/bar/baz", "."},
		{"/foo/bar/baz/./", "/foo/bar/baz", "."},
		{"foo/bar/baz/", "foo/bar", "baz"},
		{"/", "/", "/"},
		{"./", ".", "."},
		{"//", "/", "/"},
		{"/.", "/", "."},
		{"/./", "/", "."},
		{"/./.", "/.", "."},
		{".", ".", "."},
		{"f", ".", "f"},
		{"f/", ".", "f"},
		{"/////", "/", "/"},
		{"", ".", "."},
	} {
		tests = append(tests,
			struct {
				subr uint16
				args []any
				want result
			}{dif.SubrDirname, []any{c.path}, str(c.dir)},
			struct {
				subr uint16
				args []any
				want result
			}{dif.SubrBasename, []any{c.path}, str(c.base)})
	}
	for _, tt := range tests {
		m := vm.New(&vm.Config{Kernel: kmem})
		o := callObject(t, tt.subr, tt.args...)
		v, err := m.Run(o, nil)
		if err != nil {
			t.Errorf("%s%v: %v", dif.SubrName(tt.subr), tt.args, err)
			continue
		}
		var got result
		switch {
		case tt.want.null || tt.want.isS && v == 0:
			got = result{null: v == 0, num: int64(v)}
			if v != 0 {
				got.str, _ = m.ReadString(v)
				got.isS = true
			}
		case tt.want.isS:
			got.isS = true
			if got.str, err = m.ReadString(v); err != nil {
				t.Errorf("%s%v: %v", dif.SubrName(tt.subr), tt.args, err)
			}
		default:
			got.num = int64(v)
		}
		if got != tt.want {
			t.Errorf("%s%q = %v, want %v", dif.SubrName(tt.subr), tt.args, got, tt.want)
		}
	}
}

func TestSubroutineFaults(t *testing.T) {
	tests := []struct {
		subr uint16
		args []any
		code vm.FaultCode
	}{
		{dif.SubrLltostr, []any{1, 1}, vm.FaultIllOp},
		{dif.SubrLltostr, []any{1, 37}, vm.FaultIllOp},
		{dif.SubrStrtoll, []any{"12", 1}, vm.FaultIllOp},
		{dif.SubrInetNtop, []any{99, 0}, vm.FaultIllOp},
		{dif.SubrInetNtoa, []any{0}, vm.FaultBadAddr},
		{dif.SubrStrlen, []any{8}, vm.FaultBadAddr},
		{dif.SubrStrjoin, []any{"a", 8}, vm.FaultBadAddr},
		{dif.SubrMemstr, []any{"abc", ' ', 5000}, vm.FaultIllOp}, // beyond dtrace_memstr_max
		{dif.SubrAlloca, []any{-1}, vm.FaultNoScratch},
		{dif.SubrBcopy, []any{"abc", 0, 3}, vm.FaultBadAddr},
		{dif.SubrCopyin, []any{0x1000, 4}, vm.FaultBadAddr},
		{dif.SubrCopyinstr, []any{0x1000}, vm.FaultBadAddr},
		{dif.SubrCopyout, []any{"abc", 0x1000, 3}, vm.FaultBadAddr},
	}
	for _, tt := range tests {
		f := faultOf(t, vm.New(nil), callObject(t, tt.subr, tt.args...), nil)
		if f.Code != tt.code {
			t.Errorf("%s%v: %v, want %v", dif.SubrName(tt.subr), tt.args, f, tt.code)
		}
	}

	// Scratch is checked first.
	small := vm.New(&vm.Config{ScratchSize: 1024})
	if f := faultOf(t, small, callObject(t, dif.SubrMemstr, "abc", ' ', 5000), nil); f.Code != vm.FaultNoScratch {
		t.Errorf("memstr of 5000 in 1024 bytes of scratch: %v", f)
	}
	for _, subr := range []uint16{dif.SubrToupper, dif.SubrSubstr, dif.SubrBasename, dif.SubrCleanpath} {
		o := callObject(t, subr, "abc")
		if f := faultOf(t, vm.New(&vm.Config{ScratchSize: 100}), o, nil); f.Code != vm.FaultNoScratch {
			t.Errorf("%s in 100 bytes of scratch: %v", dif.SubrName(subr), f)
		}
	}

	// Without kernel privilege strings outside the machine fault KPRIV.
	const kaddr = 0xffff_fe00_0000_0000
	restricted := vm.New(&vm.Config{Restricted: true, Kernel: vm.Segments{{Addr: kaddr, Data: []byte("abc\x00")}}})
	for _, subr := range []uint16{dif.SubrStrlen, dif.SubrToupper, dif.SubrStrtoll, dif.SubrBasename} {
		f := faultOf(t, restricted, callObject(t, subr, uint64(kaddr)), nil)
		if f.Code != vm.FaultKPriv || f.Addr != kaddr {
			t.Errorf("restricted %s: %v", dif.SubrName(subr), f)
		}
	}
	if v := run(t, restricted, callObject(t, dif.SubrStrlen, "abcd"), nil); v != 4 {
		t.Errorf("restricted strlen of the string table = %d", v)
	}

	// Subroutines that read kernel structures are not run.
	for _, subr := range []uint16{dif.SubrMutexOwned, dif.SubrRWReadHeld, dif.SubrSxIsExclusive, dif.SubrGetmajor, dif.SubrDDIPathname, dif.SubrTyperef, dif.SubrDPath, dif.SubrDPathDentry} {
		_, err := vm.New(nil).Run(callObject(t, subr, 0), nil)
		var ue *vm.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), dif.SubrName(subr)) || ue.PC != 3 {
			t.Errorf("%s: %v", dif.SubrName(subr), err)
		}
	}
	// getf is refused when the DIFO is loaded, as the kernel refuses it.
	if _, err := vm.New(nil).Run(callObject(t, dif.SubrGetf, 0), nil); err == nil || !strings.Contains(err.Error(), "getf") {
		t.Errorf("getf: %v", err)
	}
}

func TestStateSubroutines(t *testing.T) {
	// rand: a sequence the seed decides.
	r := callObject(t, dif.SubrRand)
	a, b := vm.New(&vm.Config{Seed: 7}), vm.New(&vm.Config{Seed: 7})
	x1, x2 := run(t, a, r, nil), run(t, a, r, nil)
	if x1 == x2 || run(t, b, r, nil) != x1 || run(t, vm.New(&vm.Config{Seed: 8}), r, nil) == x1 {
		t.Errorf("rand: %#x, %#x", x1, x2)
	}

	// speculation: ids 1 to nspec (1 by default), then 0, each 0
	// counted unavailable.
	for _, c := range []struct {
		nspec uint32
		want  []uint64
	}{
		{0, []uint64{1, 0, 0}},
		{2, []uint64{1, 2, 0}},
		{3, []uint64{1, 2, 3, 0}},
	} {
		m := vm.New(&vm.Config{NSpec: c.nspec})
		var got []uint64
		for range c.want {
			got = append(got, run(t, m, callObject(t, dif.SubrSpeculation), nil))
		}
		if !slices.Equal(got, c.want) || m.SpecUnavail() != uint64(len(c.want))-uint64(max(c.nspec, 1)) {
			t.Errorf("nspec %d: speculation() gave %v, %d unavailable; want %v", c.nspec, got, m.SpecUnavail(), c.want)
		}
	}

	// progenyof: the process and its parent.
	m := vm.New(nil)
	ctx := &vm.Context{PID: 500, PPID: 1}
	for _, c := range []struct {
		pid  int
		want uint64
	}{{500, 1}, {1, 1}, {2, 0}} {
		if got := run(t, m, callObject(t, dif.SubrProgenyof, c.pid), ctx); got != c.want {
			t.Errorf("progenyof(%d) = %d", c.pid, got)
		}
	}

	// strtok goes on through the DIFOs of a firing.
	m.BeginFiring()
	var toks []string
	next := callObject(t, dif.SubrStrtok, null{}, ", ")
	for o := callObject(t, dif.SubrStrtok, ", a, bc,,d ", ", "); ; o = next {
		v := run(t, m, o, nil)
		if v == 0 {
			break
		}
		s, _ := m.ReadString(v)
		toks = append(toks, s)
	}
	if strings.Join(toks, "|") != "a|bc|d" {
		t.Errorf("strtok: %q", toks)
	}
	m.BeginFiring()
	if v := run(t, m, next, nil); v != 0 {
		t.Errorf("strtok(NULL) in a new firing = %#x", v)
	}

	// alloca: 8-aligned, zeroed; bcopy into it.
	m.BeginClause()
	o := build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		ir.Setx(3, 1)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 1))
		ir.Emit(dif.Call(dif.SubrAlloca, 2)) // 3 bytes
		ir.Emit(dif.Call(dif.SubrAlloca, 3)) // 3 more, aligned
		ir.Emit(dif.Flushts())
		ir.Sets("xyz", 4)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 4))
		ir.Emit(dif.Pushtv(dif.TypeCTF, 3))
		ir.Emit(dif.Pushtv(dif.TypeCTF, 1))
		ir.Emit(dif.Call(dif.SubrBcopy, 5))
		ir.Emit(dif.ALU(dif.SUB, 3, 2, 2))
		ir.Emit(dif.Ret(3))
	})
	addr := run(t, m, o, nil)
	if addr%8 != 0 {
		t.Errorf("alloca gave %#x", addr)
	}
	if b, _ := m.ReadMemory(addr, 4); string(b) != "xyz\x00" {
		t.Errorf("after bcopy: %q", b)
	}

	// memref: address and size in scratch.
	v := run(t, m, callObject(t, dif.SubrMemref, 0x1234, 16), nil)
	if b, _ := m.ReadMemory(v, 16); string(b) != "\x34\x12\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00" {
		t.Errorf("memref: % x", b)
	}
}

// TestUserMemory checks copyin, copyinstr, copyinto, copyout and
// copyoutstr against a process's memory.
func TestUserMemory(t *testing.T) {
	const ubase = 0x7fff_0000_0000
	user := vm.Segments{{Addr: ubase, Data: []byte("user data\x00more\x00...................")}}
	m := vm.New(&vm.Config{User: user})

	v := run(t, m, callObject(t, dif.SubrCopyin, uint64(ubase), 4), nil)
	if b, _ := m.ReadMemory(v, 4); string(b) != "user" {
		t.Errorf("copyin: %q", b)
	}
	v = run(t, m, callObject(t, dif.SubrCopyinstr, uint64(ubase)), nil)
	if s, _ := m.ReadString(v); s != "user data" {
		t.Errorf("copyinstr: %q", s)
	}
	v = run(t, m, callObject(t, dif.SubrCopyinstr, uint64(ubase), 3), nil)
	if s, _ := m.ReadString(v); s != "use" {
		t.Errorf("copyinstr(, 3): %q", s)
	}
	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(8, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Emit(dif.Flushts())
		ir.Setx(ubase+10, 3)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 3))
		ir.Setx(4, 3)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 3))
		ir.Emit(dif.Pushtv(dif.TypeCTF, 2))
		ir.Emit(dif.Call(dif.SubrCopyinto, 4))
		ir.Emit(dif.Ret(2))
	})
	v = run(t, m, o, nil)
	if s, _ := m.ReadString(v); s != "more" {
		t.Errorf("copyinto: %q", s)
	}

	run(t, m, callObject(t, dif.SubrCopyout, "XY", uint64(ubase+16), 2), nil)
	run(t, m, callObject(t, dif.SubrCopyoutstr, "hello", uint64(ubase+20), 100), nil)
	if got := string(user[0].Data[16:26]); got != "XY..hello\x00" {
		t.Errorf("after copyout, copyoutstr: %q", got)
	}
	if f := faultOf(t, m, callObject(t, dif.SubrCopyout, "XY", uint64(ubase+1000), 2), nil); f.Code != vm.FaultBadAddr || f.Addr != ubase+1000 {
		t.Errorf("copyout outside: %v", f)
	}
}

func TestSegments(t *testing.T) {
	s := vm.Segments{{Addr: 100, Data: []byte("abcdef")}, {Addr: 200, Data: []byte("xy"), ReadOnly: true}}
	if b, err := s.Read(102, 4); err != nil || string(b) != "cdef" {
		t.Errorf("Read: %q, %v", b, err)
	}
	for _, c := range []struct {
		addr uint64
		n    int
	}{{99, 1}, {103, 4}, {106, 1}, {150, 1}, {math.MaxUint64, 2}} {
		if _, err := s.Read(c.addr, c.n); err == nil {
			t.Errorf("Read(%d, %d) succeeded", c.addr, c.n)
		}
	}
	if err := s.Write(104, []byte("EF")); err != nil || string(s[0].Data) != "abcdEF" {
		t.Errorf("Write: %v, %q", err, s[0].Data)
	}
	if err := s.Write(200, []byte("z")); err == nil {
		t.Error("Write to a read-only segment succeeded")
	}
}
