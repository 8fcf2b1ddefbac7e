package emit_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/fuzznest"
)

// FuzzCompile runs arbitrary text through the whole compiler — parser,
// sugar, checker, code generator, DOF writer: it must never panic, and
// must fail only with a *diag.Error.
func FuzzCompile(f *testing.F) {
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "scripts", "*.d"))
	for _, s := range scripts {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"BEGIN { x = 1 + 2 * 3; @a[execname] = quantize(x); printf(\"%d %s\\n\", x, execname); }",
		"struct s { int a : 3; char b[4]; }; BEGIN { this->p = (struct s *)alloca(8); this->p->a = 1; trace(this->p->b); }",
		"BEGIN { a[1, \"k\"] = strjoin(\"x\", lltostr(2)); trace(a[1, \"k\"]); s = speculation(); speculate(s); }",
		"inline int N[int x] = x * 2; BEGIN /N[3] > 4/ { trace(N[1]); exit(0); }",
	} {
		f.Add([]byte(s))
	}
	// Deep nesting of every construct, which inputs reach through
	// fuzznest's directive.
	for _, s := range fuzznest.Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		src = fuzznest.Expand(src)
		c := check.NewChecker(&check.Config{})
		prog, err := parser.ParseFile("fuzz.d", src, &parser.Config{Types: c, Declare: c.Declare, DefineTag: c.DefineTag,
			AllowEmpty: true, DefaultArgs: true, ArgRefs: true})
		if err == nil {
			err = (&sugar.Expander{}).Expand(prog)
		}
		var info *check.Info
		if err == nil {
			info, err = c.Check(prog)
		}
		var p *dof.Program
		if err == nil {
			p, err = emit.Program(prog, info, nil)
		}
		if err == nil {
			_, err = dof.Write(p, nil)
			if err != nil {
				t.Fatalf("dof.Write: %v", err)
			}
			return
		}
		var de *diag.Error
		if !errors.As(err, &de) {
			t.Fatalf("error is %T, not *diag.Error: %v", err, err)
		}
	})
}
