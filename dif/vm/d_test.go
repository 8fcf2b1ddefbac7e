package vm_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// compileD parses, checks and generates src.
func compileD(t *testing.T, src string) *dof.Program {
	t.Helper()
	p, err := dtracetest.Compile("t.d", []byte(src), nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return p
}

// listing is the program's DIF as dtrace -S prints it.
func listing(p *dof.Program) string {
	var b bytes.Buffer
	if err := emit.List(&b, p); err != nil {
		return err.Error()
	}
	return b.String()
}

// record is what the kernel records for a traced value: an integer cut
// to its size, or the string a reference points to.
type record struct {
	n   uint64
	s   string
	str bool
}

// fire fires each probe p enables, in program order, once, on one
// machine: for each of its ECBs, the predicate and then each action, as
// dtrace_probe runs them. The ERROR probe is not fired. It returns what
// the recording actions (DIFEXPR with a value) recorded.
func fire(t *testing.T, m *vm.Machine, p *dof.Program, ctx *vm.Context) ([]record, error) {
	t.Helper()
	var probes []dof.ProbeSpec
	for _, ecb := range p.ECBs {
		if ecb.Probe.Name != "ERROR" && !slices.Contains(probes, ecb.Probe) {
			probes = append(probes, ecb.Probe)
		}
	}
	if ctx == nil {
		ctx = &vm.Context{}
	}
	var recs []record
	for _, probe := range probes {
		c := *ctx
		c.ProbeProv, c.ProbeMod, c.ProbeFunc, c.ProbeName = probe.Provider, probe.Module, probe.Function, probe.Name
		m.BeginFiring()
		for _, ecb := range p.ECBs {
			if ecb.Probe != probe {
				continue
			}
			m.BeginClause()
			var err error
			if recs, err = clause(m, ecb, &c, recs); err != nil {
				return recs, err
			}
		}
	}
	return recs, nil
}

// clause runs one ECB and appends what it records to recs.
func clause(m *vm.Machine, ecb dof.ECB, ctx *vm.Context, recs []record) ([]record, error) {
	if ecb.Pred != nil {
		v, err := m.Run(emit.Object(ecb.Pred), ctx)
		if err != nil || v == 0 {
			return recs, err
		}
	}
	for _, a := range ecb.Actions {
		if a.DIFO == nil {
			continue
		}
		o := emit.Object(a.DIFO)
		v, err := m.Run(o, ctx)
		if err != nil {
			return recs, err
		}
		if a.Kind != dof.ActDIFExpr || !o.Ret.ByRef() && o.Ret.Size == 0 {
			continue
		}
		switch {
		case o.Ret.Kind == dif.TypeString:
			s, err := m.ReadString(v)
			if err != nil {
				return recs, err
			}
			recs = append(recs, record{s: s, str: true})
		case o.Ret.ByRef():
			b, err := m.ReadMemory(v, int(o.Ret.Size))
			if err != nil {
				return recs, err
			}
			recs = append(recs, record{s: string(b), str: true})
		default:
			if o.Ret.Size < 8 {
				v &= 1<<(8*o.Ret.Size) - 1
			}
			recs = append(recs, record{n: v})
		}
	}
	return recs, nil
}

// n is an integer record of size bytes.
func n(v int64, size uint) record {
	u := uint64(v)
	if size < 8 {
		u &= 1<<(8*size) - 1
	}
	return record{n: u}
}

func s(v string) record { return record{s: v, str: true} }

func (r record) String() string {
	if r.str {
		return strconv.Quote(r.s)
	}
	return fmt.Sprintf("%#x", r.n)
}

// TestD compiles D through the real pipeline and checks the values the
// generated DIF computes.
func TestD(t *testing.T) {
	ctx := &vm.Context{
		PID: 4242, PPID: 1, TID: 100123, UID: 1001, GID: 20,
		Execname:  "sshd",
		Args:      []uint64{7, ^uint64(2), 0x1234, 200, 0x7fff0000},
		Timestamp: 1_000_000_000,
	}
	type test struct {
		src  string
		want []record
	}
	tests := []test{
		{`BEGIN { x = 3; y = x * 7 + 1; trace(y); }`, []record{n(22, 8)}},
		{`BEGIN { a["k", 2] = 5; trace(a["k", 2] * 2); }`, []record{n(10, 4)}},
		{`BEGIN { s = strjoin("ab", "cd"); trace(strlen(s)); }`, []record{n(4, 8)}},
		{`BEGIN { s = strjoin("ab", "cd"); trace(s); }`, []record{s("abcd")}},

		// Arithmetic and signedness.
		{`BEGIN { x = -7; trace(x / 2); trace(x % 3); trace(x >> 1); }`,
			[]record{n(-3, 4), n(-1, 4), n(-4, 4)}},
		{`BEGIN { x = (int)arg1; y = (unsigned)x; trace(y / 2); trace(y >> 1); trace(y % 5); }`,
			[]record{n(0x7ffffffe, 4), n(0x7ffffffe, 4), n(0xfffffffd%5, 4)}},
		// As dtrace's dt_cast folds it, (unsigned)-7 keeps the bits
		// of -7 above its 32, which udiv then divides.
		{`BEGIN { x = (unsigned)-7; trace(x / 2); }`, []record{n(0xfffffffc, 4)}},
		{`BEGIN { x = -7LL; trace(x / 2); trace(x >> 60); trace((uint64_t)x >> 60); }`,
			[]record{n(-3, 8), n(-1, 8), n(15, 8)}},
		{`BEGIN { x = 1; trace(x << 31); trace(1LL << 40); trace(~x); trace(-x); trace(!x); }`,
			[]record{n(-1<<31, 4), n(1<<40, 8), n(-2, 4), n(-1, 4), n(0, 4)}},
		{`BEGIN { x = 0x0f; trace(x & 6); trace(x | 0x30); trace(x ^ 0xff); }`,
			[]record{n(6, 4), n(0x3f, 4), n(0xf0, 4)}},
		{`BEGIN { c = (char)arg3; u = (unsigned char)arg3; trace(c); trace(u); trace(c + 0); trace(u + 0); trace(c < 0); trace(u < 0); }`,
			[]record{n(-56, 1), n(200, 1), n(-56, 4), n(200, 4), n(1, 4), n(0, 4)}},
		// dt_cast folds (char)200 to 0xc8, not sign-extended.
		{`BEGIN { c = (char)200; trace(c + 0); }`, []record{n(200, 4)}},
		{`BEGIN { x = (short)0x12345; trace(x); y = (int)0x123456789LL; trace(y); }`,
			[]record{n(0x2345, 2), n(0x23456789, 4)}},

		// Comparisons, ?:, && and ||.
		{`BEGIN { x = -1; trace(x < 0); trace(x > 0); trace((unsigned)x > 0); trace(x <= -1); trace(x >= 0); trace(x == -1); trace(x != -1); }`,
			[]record{n(1, 4), n(0, 4), n(1, 4), n(1, 4), n(0, 4), n(1, 4), n(0, 4)}},
		{`BEGIN { x = 3; trace(x > 2 ? 10 : 20); trace(x > 5 ? 10 : 20); }`,
			[]record{n(10, 4), n(20, 4)}},
		{`BEGIN { x = 0; y = 2; trace(x && y); trace(x || y); trace(y && y); trace(x || x); trace(x ^^ y); trace(y ^^ y); }`,
			[]record{n(0, 4), n(1, 4), n(1, 4), n(0, 4), n(1, 4), n(0, 4)}},
		{`BEGIN { x = 0; trace(x != 0 && 10 / x > 1); trace(x == 0 || 10 / x > 1); }`,
			[]record{n(0, 4), n(1, 4)}},
		{`BEGIN { trace("abc" == "abc"); trace("abc" != "abd"); trace(execname == "sshd"); trace(execname != "sshd"); }`,
			[]record{n(1, 4), n(1, 4), n(1, 4), n(0, 4)}},

		// Variables of every scope.
		{`BEGIN { self->t = 5; this->l = self->t + 1; g = this->l * 2; trace(g); trace(self->t); }`,
			[]record{n(12, 4), n(5, 4)}},
		{`BEGIN { self->s = "thread"; this->s = strjoin(self->s, "!"); trace(this->s); }`,
			[]record{s("thread!")}},
		{`BEGIN { x++; x++; --x; x += 10; x *= 3; trace(x); }`, []record{n(33, 4)}},
		{`BEGIN { self->t = 1; self->t = 0; trace(self->t); }`, []record{n(0, 4)}},

		// Associative arrays.
		{`BEGIN { a[1] = 1; a[2] = 2; a[1] += 10; trace(a[1]); trace(a[2]); trace(a[3]); }`,
			[]record{n(11, 4), n(2, 4), n(0, 4)}},
		{`BEGIN { k = strjoin("x", "y"); a[k] = 3; trace(a["xy"]); }`, []record{n(3, 4)}},
		{`BEGIN { self->a[pid, "s"] = 9; trace(self->a[4242, "s"]); trace(self->a[4243, "s"]); }`,
			[]record{n(9, 4), n(0, 4)}},
		{`BEGIN { a["one"] = "uno"; trace(a["one"]); }`, []record{s("uno")}},

		// Built-in variables.
		{`BEGIN { trace(pid); trace(tid); trace(execname); trace(probename); trace(arg0 + arg2); trace((int)arg1); }`,
			[]record{n(4242, 4), n(100123, 8), s("sshd"), s("BEGIN"), n(7+0x1234, 8), n(-3, 4)}},
		{`syscall::read:entry { trace(arg0); trace(probefunc); }`,
			[]record{n(7, 8), s("read")}},

		// Strings.
		{`BEGIN { trace(substr("hello", 1, 3)); trace(strchr("hello", 'l')); trace(strrchr("hello", 'l')); trace(strstr("hello", "ll")); }`,
			[]record{s("ell"), s("llo"), s("lo"), s("llo")}},
		{`BEGIN { trace(index("hello", "l")); trace(rindex("hello", "l")); trace(index("hello", "z")); }`,
			[]record{n(2, 4), n(3, 4), n(-1, 4)}},
		{`BEGIN { trace(toupper("MiXed")); trace(tolower("MiXed")); trace(lltostr(-1234)); trace(strtoll("0x1f", 16)); }`,
			[]record{s("MIXED"), s("mixed"), s("-1234"), n(31, 8)}},
		{`BEGIN { trace(basename("/usr/lib/libc.so")); trace(dirname("/usr/lib/libc.so")); trace(cleanpath("/a/./b/../c//d")); }`,
			[]record{s("libc.so"), s("/usr/lib"), s("/a/c/d")}},
		{`BEGIN { x = strtok("a,b,,c", ","); y = strtok(NULL, ","); z = strtok(NULL, ","); trace(x); trace(y); trace(z); }`,
			[]record{s("a"), s("b"), s("c")}},
		{`BEGIN { trace(htons(0x1234)); trace(ntohl(0x11223344)); }`,
			[]record{n(0x3412, 2), n(0x44332211, 4)}},

		// Structures through alloca, with a bit-field.
		{`struct s { int a; char b; int c : 3; int d : 5; }; BEGIN { this->p = (struct s *)alloca(sizeof (struct s)); this->p->a = 5; this->p->c = -2; this->p->d = 9; trace(this->p->a + this->p->c); trace(this->p->d); trace(this->p->c); }`,
			[]record{n(3, 4), n(9, 4), n(-2, 4)}},
		// ctf_add_member starts each member, a bit-field too, at the
		// byte after the one before it ends.
		{`struct s { unsigned a : 3; unsigned b : 5; }; BEGIN { this->p = (struct s *)alloca(4); this->p->a = 7; this->p->b = 31; this->p->a = 2; trace(this->p->a); trace(this->p->b); trace(*(unsigned char *)this->p); trace(*((unsigned char *)this->p + 1)); trace(sizeof (struct s)); }`,
			[]record{n(2, 4), n(31, 4), n(2, 1), n(31, 1), n(2, 8)}},
		{`struct s { int a; long b; }; BEGIN { this->p = (struct s *)alloca(sizeof (struct s)); this->p->b = 1LL << 40; trace(this->p->b); trace(sizeof (struct s)); }`,
			[]record{n(1<<40, 8), n(16, 8)}},

		// if/else through the sugar pass.
		{`BEGIN { x = 4; if (x > 3) { y = 1; } else { y = 2; } trace(y); }`, []record{n(1, 4)}},

		// More arithmetic at run time.
		{`BEGIN { x = (int)arg1; trace(x >> 1); trace((unsigned)x >> 28); trace(x / 2); trace(x % 2); trace(-x); }`,
			[]record{n(-2, 4), n(15, 4), n(-1, 4), n(-1, 4), n(3, 4)}},
		{`BEGIN { trace(arg1 / 2); trace(arg1 % 2); trace(arg1 >> 1); trace((uint64_t)arg1 >> 62); trace(arg1 * arg1); }`,
			[]record{n(-1, 8), n(-1, 8), n(-2, 8), n(3, 8), n(9, 8)}},
		{`BEGIN { x = 5; x <<= 2; x >>= 1; x |= 1; x &= 7; x ^= 2; x %= 4; trace(x); y = 100; y /= 7; y -= 4; trace(y); }`,
			[]record{n(1, 4), n(10, 4)}},
		{`BEGIN { a = 1; b = 2; c = 3; d = 4; e = 5; f = 6; trace(((a + b) * (c + d)) - ((e + f) * (a + c)) + (b * (d + (e * (f + a))))); }`,
			[]record{n(21-44+2*(4+5*7), 4)}},
		{`BEGIN { x = (int)arg1; trace(x < 0 ? (x < -2 ? 1 : 2) : 3); trace(x > 0 || x < -5 ? 4 : 5); trace(!(x < 0) ? 6 : 7); }`,
			[]record{n(1, 4), n(5, 4), n(7, 4)}},
		{`BEGIN { x = (unsigned)arg3; trace(x > 100 && x < 300); trace(x == 200 && x != 200); }`,
			[]record{n(1, 4), n(0, 4)}},

		// Clause-locals live through the clauses of one firing.
		{`BEGIN { this->x = 5; } BEGIN { this->x++; trace(this->x); }`, []record{n(6, 4)}},
		{`BEGIN { self->n = 1; } BEGIN { self->n *= 7; } BEGIN { trace(self->n); }`, []record{n(7, 4)}},

		// Pointers.
		{`BEGIN { this->p = (int *)alloca(16); this->p[2] = 7; this->p[3] = -1; trace(this->p[2]); trace(*(this->p + 2)); trace(&this->p[3] - &this->p[1]); trace(this->p[3]); }`,
			[]record{n(7, 4), n(7, 4), n(2, 8), n(-1, 4)}},
		{`BEGIN { this->c = (char *)alloca(4); this->c[0] = 'h'; this->c[1] = 'i'; trace(stringof(this->c)); trace(strlen(stringof(this->c))); }`,
			[]record{s("hi"), n(2, 8)}},
		{`BEGIN { this->q = (uint16_t *)alloca(4); *this->q = 0xffff; trace(*this->q); trace(*(int16_t *)this->q); }`,
			[]record{n(0xffff, 2), n(-1, 2)}},

		// Structures as variables and values.
		{`struct s { int a; int b; }; struct s g; BEGIN { g.a = 1; g.b = 2; trace(g.a * 10 + g.b); }`,
			[]record{n(12, 4)}},
		{`struct s { int a; char n[8]; }; BEGIN { this->p = (struct s *)alloca(sizeof (struct s)); this->p->n[0] = 'o'; this->p->n[1] = 'k'; trace(stringof(this->p->n)); trace(offsetof(struct s, n)); }`,
			[]record{s("ok"), n(4, 8)}},

		// More strings.
		{`BEGIN { trace(lltostr(255, 16)); trace(lltostr(8, 8)); trace(strtoll("123")); trace(strtoll(" -77")); }`,
			[]record{s("0xff"), s("010"), n(123, 8), n(-77, 8)}},
		{`BEGIN { x = lltostr(12); y = strjoin(x, "ab"); trace(strlen(y)); trace(y); }`, []record{n(4, 8), s("12ab")}},
		{`BEGIN { trace(substr("hello", -3)); trace(substr("hello", 1)); trace(index("hello", "l", 3)); trace(rindex("hello", "l", 2)); trace(rindex("hello", "l", 1)); }`,
			[]record{s("llo"), s("ello"), n(3, 4), n(2, 4), n(-1, 4)}},
		{`BEGIN { self->s = execname; trace(strlen(self->s)); x = self->s; trace(x); }`,
			[]record{n(4, 8), s("sshd")}},
		{`BEGIN { s = "abc"; t = s; s = "xyz"; trace(t); trace(s); }`,
			[]record{s("abc"), s("xyz")}},

		// Increments, assignments as values, the comma.
		{`BEGIN { x = 5; y = x++; trace(y); trace(x); z = ++x; trace(z); }`, []record{n(5, 4), n(6, 4), n(7, 4)}},
		{`BEGIN { a[1] = 5; a[1]++; trace(a[1]); b = a[1]--; trace(b); trace(a[1]); }`, []record{n(6, 4), n(6, 4), n(5, 4)}},
		{`BEGIN { self->n[1] = 3; self->n[1] += 2; trace(self->n[1]); }`, []record{n(5, 4)}},
		{`BEGIN { trace((x = 3) + 1); trace(x); trace((x, 2)); }`, []record{n(4, 4), n(3, 4), n(2, 4)}},
		{`BEGIN { x = (int)arg1; trace(x > 0 ? "pos" : "neg"); trace(arg1 < 0 ? -arg1 : arg1); }`, []record{s("neg"), n(3, 8)}},
		{`BEGIN { x = (int)arg1; trace(x < 1 && x > -5 || x == 100); }`, []record{n(1, 4)}},
		// dt_type_promote does not promote to int: unsigned char +
		// unsigned char is an unsigned char.
		{`BEGIN { x = (unsigned char)arg3; trace(x + x); trace(x * 2); }`, []record{n(144, 1), n(400, 4)}},
		{`struct s { int a; int b; }; struct s g, h; BEGIN { g.a = 1; g.b = 2; h = g; g.b = 3; trace(h.b); }`, []record{n(2, 4)}},
		{`BEGIN { a[1, 2, 3, 4, 5, 6, 7] = 1; trace(a[1, 2, 3, 4, 5, 6, 7]); trace(a[1, 2, 3, 4, 5, 6, 8]); }`, []record{n(1, 4), n(0, 4)}},

		// A process's memory.
		{`BEGIN { trace(copyinstr(arg4)); self->p = copyinstr(arg4); trace(strlen(self->p)); }`, []record{s("/etc/passwd"), n(11, 8)}},
		{`BEGIN { this->p = (int *)copyin(arg4, 4); trace(*this->p); }`, []record{n(0x6374652f, 4)}},

		// Predicates.
		{`BEGIN /pid == 4242/ { trace(1); } BEGIN /pid != 4242/ { trace(2); }`, []record{n(1, 4)}},

		// Cases that once showed code generator faults.
		{`BEGIN { trace("abc" < "abd"); trace("abd" < "abc"); trace("abc" <= "abc"); trace("abd" > "abc"); trace("abc" > "abd"); trace("abc" >= "abd"); }`,
			[]record{n(1, 4), n(0, 4), n(1, 4), n(1, 4), n(0, 4), n(0, 4)}},
		{`BEGIN { trace(strlen(strjoin(lltostr(12), "ab"))); }`, []record{n(4, 8)}},
		{`BEGIN { x = "12"; trace(strlen(strjoin(x, "ab"))); }`, []record{n(4, 8)}},
		{`BEGIN { a[1, strjoin("x", "y")] = 5; trace(a[1, "xy"]); }`, []record{n(5, 4)}},
		{`struct s { int a; int b; }; struct s st[int]; BEGIN { st[1].a = 3; st[1].b = 4; trace(st[1].a + st[1].b); trace(st[2].a); }`,
			[]record{n(7, 4), n(0, 4)}},
		{`BEGIN { trace(basename(copyinstr(arg4))); }`, []record{s("passwd")}},

		// A string member of a struct in an associative array: copys
		// copies strsize bytes from the string table (dt_cg_store).
		{`struct s { string a; string b; int n; } st[int]; BEGIN { st[1].a = "foo"; st[1].b = strjoin("x", "y"); st[1].n = 3; trace(st[1].a); trace(st[1].b); trace(st[1].n); trace(st[2].a); }`,
			[]record{s("foo"), s("xy"), n(3, 4), s("")}},
		// Layouts as libctf makes them: bit-fields of the power of two
		// bytes that hold them (bitfields/tst.SizeofBitField.d), no
		// padding after the last member, a struct aligned as its first.
		{`struct b1 { int a : 1; int b : 3; int c : 3; }; struct b5 { int c : 12; int a : 10; int b : 3; }; struct b6 { int a : 20; int b : 3; int c : 12; }; struct b7 { long c : 32; long long d : 9; int e : 1; }; struct b8 { char a : 2; short b : 12; long c : 32; }; struct b12 { int a : 30; int b : 30; int c : 32; }; BEGIN { trace(sizeof (struct b1)); trace(sizeof (struct b5)); trace(sizeof (struct b6)); trace(sizeof (struct b7)); trace(sizeof (struct b8)); trace(sizeof (struct b12)); }`,
			[]record{n(3, 8), n(5, 8), n(6, 8), n(7, 8), n(8, 8), n(12, 8)}},
		{`struct s { long a; char b; }; struct t { char c; struct s s; }; union u { char c; int i : 20; }; BEGIN { trace(sizeof (struct s)); trace(offsetof(struct t, s)); trace(sizeof (struct t)); trace(sizeof (union u)); }`,
			[]record{n(9, 8), n(8, 8), n(17, 8), n(4, 8)}},
		{`struct s { int a : 4; int b : 7; int c : 1; int d : 2; }; struct s g; BEGIN { g.a = 1; g.b = -5; g.c = 0; g.d = 2; trace(g.a); trace(g.b); trace(g.c); trace(g.d); trace(sizeof (g)); }`,
			[]record{n(1, 4), n(-5, 4), n(0, 4), n(-2, 4), n(4, 8)}},
		// Casts of casts, folded (dt_cast, and dt_assign_common's cast
		// to the variable's type) and at run time (dt_cg_typecast), as
		// the suite's arithmetic/tst.compcast.d and tst.execcast.d.
		{`int64_t x; BEGIN { x = (int32_t)(int16_t)0xfff0; trace(x); x = (int32_t)(uint16_t)0xfff0; trace(x); x = (uint32_t)(int16_t)0xfff0; trace(x); x = (int16_t)(uint32_t)0xfff0; trace(x); x = (uint16_t)(int32_t)0xfff0; trace(x); }`,
			[]record{n(-16, 8), n(0xfff0, 8), n(0xfffffff0, 8), n(-16, 8), n(0xfff0, 8)}},
		{`int64_t x; BEGIN { z = 0xfff0; x = (int32_t)(int16_t)z; trace(x); x = (int32_t)(uint16_t)z; trace(x); x = (uint32_t)(int16_t)z; trace(x); x = (int16_t)(uint32_t)z; trace(x); x = (uint16_t)(int32_t)z; trace(x); }`,
			[]record{n(-16, 8), n(0xfff0, 8), n(0xfffffff0, 8), n(-16, 8), n(0xfff0, 8)}},
		// An int64_t takes a negative int constant sign-extended; an
		// unsigned one zero-extended.
		{`int64_t x; uint64_t y; BEGIN { x = -1; y = 0xffffffff; trace(x); trace(y); x = 0xfffffff0U; trace(x); }`,
			[]record{n(-1, 8), n(0xffffffff, 8), n(0xfffffff0, 8)}},
		// dt_cg_asgn_op stores the register as it is: a char variable
		// assigned a wider int keeps it whole, as dtrace's does.
		{`char c; BEGIN { i = 300; c = i; trace(c + 0); }`, []record{n(300, 4)}},
	}
	user := vm.Segments{{Addr: 0x7fff0000, Data: []byte("/etc/passwd\x00")}}
	for _, tt := range tests {
		p := compileD(t, tt.src)
		m := vm.New(&vm.Config{User: user})
		got, err := fire(t, m, p, ctx)
		if err != nil {
			t.Errorf("%s: %v\n%s", tt.src, err, listing(p))
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: recorded %v, want %v\n%s", tt.src, got, tt.want, listing(p))
		}
	}
}

// TestDFault checks faults of compiled D.
func TestDFault(t *testing.T) {
	tests := []struct {
		src  string
		code vm.FaultCode
	}{
		{`BEGIN { x = 0; trace(1 / x); }`, vm.FaultDivZero},
		{`BEGIN { x = 0; trace(1 % x); }`, vm.FaultDivZero},
		{`BEGIN { trace(*(int *)0); }`, vm.FaultBadAddr},
		{`BEGIN { *(int *)8 = 1; }`, vm.FaultBadAddr},
		{`BEGIN { trace(lltostr(1, 1)); }`, vm.FaultIllOp},
	}
	for _, tt := range tests {
		p := compileD(t, tt.src)
		_, err := fire(t, vm.New(nil), p, nil)
		var f *vm.Fault
		if !errors.As(err, &f) || f.Code != tt.code {
			t.Errorf("%s: got %v, want fault %v\n%s", tt.src, err, tt.code, listing(p))
		}
	}
}
