package consumer_test

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// TestPrint checks print() of each shape of type as dtrace_print prints
// it (dt_print.c): integers in hexadecimal, characters quoted, strings
// and character arrays as strings, arrays in brackets, structs and
// unions one member a line with their types, bit-fields with their
// widths, enums by name, pointers in hexadecimal.
func TestPrint(t *testing.T) {
	decls := `
struct fwd;
typedef struct s {
	char c;
	unsigned char uc;
	int m[2][3];
	union {
		int i;
		char b[4];
	} u;
	struct fwd *fp;
	struct { int x; } *ap;
	unsigned int bf:12;
	unsigned int bg:20;
	long l;
	string str;
	char e[2];
} s_t;
enum e { A = 1, B = 5 };
typedef struct pancakes {
	int i;
	string s;
	struct timespec t;
} pancakes_t;
translator pancakes_t < void *V > {
	i = 2 * 10;
	s = strjoin("I like ", "pancakes");
	t = *(struct timespec *)alloca(sizeof (struct timespec));
};
`
	tests := []struct {
		name, body, want string
	}{
		{"struct", `
			this->s = (s_t *)alloca(sizeof (s_t));
			this->s->c = -1;
			this->s->uc = 200;
			this->s->m[1][2] = 7;
			this->s->u.i = 0x41424344;
			this->s->fp = (struct fwd *)8;
			this->s->bf = 0xabc;
			this->s->bg = 0x12345;
			this->s->l = -2;
			this->s->str = "hi";
			print(*this->s);`, `s_t {
    char c = '\37777777777'
    unsigned char uc = 0xc8
    int [2][3] m = [ [ 0, 0, 0 ], [ 0, 0, 0x7 ] ]
    union u = {
        int i = 0x41424344
        char [4] b = [ 'D', 'C', 'B', 'A' ]
    }
    struct fwd *fp = 0x8
    struct  *ap = 0
    unsigned int bf :12 = 0xabc
    unsigned int bg :20 = 0x12345
    long l = 0xfffffffffffffffe
    string str = [ "hi" ]
    char [2] e = [ "" ]
}
`},
		{"enum", `print((enum e)5); print((enum e)3); print(A);`, "enum e B\nenum e 3\nenum e A\n\n"},
		{"chars", `print((char)0); print((char)'\n'); print((uchar_t)'a'); print((int8_t)'z');`, "char '\\0'\nchar '\\012'\nuchar_t 0x61\nint8_t 'z'\n\n"},
		{"array of arrays", `this->s = (s_t *)alloca(sizeof (s_t)); this->s->m[0][1] = 1; print(this->s->m);`, "int [2][3] [ [ 0, 0x1, 0 ], [ 0, 0, 0 ] ]\n\n"},
		// print/tst.xlate.d, with alloca()'s zeroes for FreeBSD's
		// `dtrace_zero.
		{"translated", `print(*(xlate < pancakes_t * > ((void *)NULL)));`, `pancakes_t {
    int i = 0x14
    string s = [ "I like pancakes" ]
    struct timespec t = {
        time_t tv_sec = 0
        long tv_nsec = 0
    }
}
`},
		{"empty string", `print("");`, "string \"\"\n\n"},
		{"pointers", `print((int *)0); print((char **)16); print((void (*)())32);`, "int * 0\nchar ** 0x10\nint (*)() 0x20\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compile("t.d", []byte("#pragma D option quiet\n"+decls+"BEGIN {"+tt.body+" exit(0); }"), &parser.Config{}, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := execute(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrintRecord checks print() records made by hand: a function
// pointer prints as the kernel function it points to, floats as
// "%+.7e", and a record whose type the table does not have prints as
// trace() prints it, as dtrace_print leaves it to.
func TestPrintRecord(t *testing.T) {
	var tb types.Table
	btfChar := &types.Int{Name: "char", Bytes: 1, Char: true}
	fptr := &types.Pointer{Elem: &types.Func{Result: types.IntType}}
	// Types as broken kernel type information may give them: a struct
	// whose member lies past its size, one that contains itself.
	liar := &types.Struct{Name: "liar", Bytes: 4}
	liar.SetMembers([]types.Member{{Name: "x", Type: types.IntType, Offset: 64}})
	loop := &types.Struct{Name: "loop", Bytes: 4}
	loop.SetMembers([]types.Member{{Name: "self", Type: loop}})
	// The walk stops 64 structs deep; each struct's brace closes when
	// the walk leaves it, so the innermost, which it never enters, has
	// none, as with an empty struct in dtrace.
	loopWant := ""
	for d := 0; d <= 64; d++ {
		name := ""
		if d > 0 {
			name = " self ="
		}
		loopWant += strings.Repeat("    ", d) + "struct loop" + name + " {\n"
	}
	for d := 64; d > 0; d-- {
		loopWant += strings.Repeat("    ", d-1) + "}"
		if d > 1 {
			loopWant += "\n"
		}
	}
	tests := []struct {
		name   string
		ref    string
		rtype  dif.Type
		val    record.Value
		want   string
		tables bool
	}{
		{"function pointer", tb.Ref(fptr), i8, record.Value{Int: 0x1010}, "int (*)() kernel`malloc\n", true},
		{"function pointer without a symbol", tb.Ref(fptr), i8, record.Value{Int: 0x3000}, "int (*)() 0x3000\n", true},
		{"float", tb.Ref(types.FloatType), f4, record.Value{Int: uint64(math.Float32bits(-1.5))}, "float -1.5000000e+00\n", true},
		{"double", tb.Ref(types.Double), f8, record.Value{Int: math.Float64bits(1e100)}, "double +1.0000000e+100\n", true},
		// BTF's char has no sign; on x86 C's is signed, and prints so.
		{"kernel's char", tb.Ref(&types.Array{Elem: btfChar, Len: 4}), i4, record.Value{Int: 0x6968}, map[bool]string{
			true: `char [4] "hi"` + "\n", false: "char [4] [ 0x68, 0x69, 0, 0 ]\n"}[runtime.GOARCH == "amd64" || runtime.GOARCH == "386"], true},
		{"no such type", "D`99", i4, record.Value{Int: 7}, "7", true},
		{"no table", tb.Ref(types.IntType), i4, record.Value{Int: 7}, "7", false},
		{"a type larger than the record", tb.Ref(types.Long), i4, record.Value{Int: 7}, "7", true},
		{"a member past its struct", tb.Ref(liar), i4, record.Value{Int: 7}, "struct liar {\n    int x = <beyond the record>\n}", true},
		{"a struct that contains itself", tb.Ref(loop), i4, record.Value{Int: 7}, loopWant, true},
	}
	for _, tt := range tests {
		l := record.NewLayout(record.DefaultOptions)
		act := enabling.Action{Kind: dof.ActDIFExpr, Format: tt.ref, DIFO: &dif.Object{Ret: tt.rtype}}
		eps, err := l.Add(&enabling.ECB{Actions: []enabling.Action{act}}, []record.Probe{{ID: 1, Provider: "dtrace", Name: "BEGIN"}})
		if err != nil {
			t.Fatal(err)
		}
		b := record.NewBuffer(1024)
		if _, err := b.Write(eps[0], 0, []record.Value{tt.val}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cfg := consumer.Config{Out: &out, Quiet: true, Symbols: fakeSymbols{}}
		if tt.tables {
			cfg.Types = &tb
		}
		if err := consumer.New(l, cfg).Consume(0, b.Bytes(), 0); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
