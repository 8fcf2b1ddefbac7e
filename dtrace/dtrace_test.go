package dtrace_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dtrace"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// open returns a handle on D's own types only, so that results do not
// depend on the machine's kernel, accepting descriptions that match no
// probe of this machine.
func open(t *testing.T, stdout, stderr *bytes.Buffer) *dtrace.Handle {
	t.Helper()
	cfg := &dtrace.Config{BTF: "none"}
	if stdout != nil {
		cfg.Stdout = stdout
	}
	if stderr != nil {
		cfg.Stderr = stderr
	}
	h, err := dtrace.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.SetOpt("zdefs", ""); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCompileDOF compiles programs from text to DOF without the
// command, and loads the DOF as the kernel would.
func TestCompileDOF(t *testing.T) {
	h := open(t, nil, nil)
	p1, err := h.Compile(dtrace.Name, `BEGIN /pid != 0/ { @c[execname] = count(); printf("%d %s\n", pid, execname); }`, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Declarations carry over from one program to the next.
	if _, err := h.CompileScript("decl.d", []byte("int total;\nBEGIN { total = 1; }\n"), 0); err != nil {
		t.Fatal(err)
	}
	p2, err := h.Compile(dtrace.Provider, "dtrace { total++; exit(0); }", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dtrace.DOF(p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatalf("the kernel's checks refuse the DOF: %v", err)
	}
	if len(k.ECBs) != 2 || k.ECBs[0].Pred == nil || len(k.ECBs[0].Actions) != 5 || len(k.ECBs[1].Actions) != 2 {
		t.Errorf("DOF has %d ECBs: %+v; want the first with a predicate and 5 actions, the second with 2", len(k.ECBs), k.ECBs)
	}
	if k.Destructive {
		t.Error("count() and printf() are not destructive")
	}
}

// TestCompileOutput checks what Sugar and DIFV write, and that NoCode
// makes no DIF.
func TestCompileOutput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	h := open(t, &stdout, &stderr)
	p, err := h.Compile(dtrace.Function, "dtrace:: /1/ { x = 1; }", dtrace.Sugar|dtrace.DIFV)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("dtrace:::\n/0x1/\n{\n        (x = 0x1);\n}\n\n", stdout.String()); diff != "" {
		t.Errorf("-d text (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr.String(), "DIFO") || !strings.Contains(stderr.String(), "stgs %r1, DT_VAR(1280)") {
		t.Errorf("-S listing lacks the clause's DIF:\n%s", stderr.String())
	}
	if _, _, obj := dtrace.Parts(p); obj == nil || len(obj.ECBs) != 1 {
		t.Errorf("object = %+v, want one ECB", obj)
	}
	// The program gives the same texts after compiling.
	var text, dif bytes.Buffer
	if err := p.Print(&text); err != nil {
		t.Fatal(err)
	}
	if err := p.ListDIF(&dif); err != nil {
		t.Fatal(err)
	}
	if text.String() != stdout.String() || dif.String() != stderr.String() {
		t.Errorf("Print and ListDIF:\n%s%s\ndiffer from what Sugar and DIFV wrote:\n%s%s", &text, &dif, &stdout, &stderr)
	}
	p, err = h.Compile(dtrace.Name, "BEGIN { y = 2; }", dtrace.NoCode)
	if tree, info, obj := dtrace.Parts(p); err != nil || obj != nil || info == nil || tree == nil {
		t.Errorf("NoCode: %v, object %v, info %v, tree %v; want checked, its tree and no code", err, obj, info, tree)
	}
	// A program compiled to code alone keeps no syntax tree: a large one
	// would hold it to no end.
	p, err = h.Compile(dtrace.Name, "BEGIN { z = 3; }", 0)
	if tree, _, obj := dtrace.Parts(p); err != nil || obj == nil || tree != nil {
		t.Errorf("code only: %v, object %v, tree %v; want code and no tree", err, obj, tree)
	}
}

// TestCompileErrors checks that compile errors read as dtrace's and
// carry the D error.
func TestCompileErrors(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.d")
	os.WriteFile(script, []byte("BEGIN\n{\n\ttrace(nosuch);\n}\n"), 0o644)
	tests := []struct {
		spec dtrace.Spec
		text string
		msg  string
		tag  diag.Tag // 0 where no D error is inside
	}{
		{dtrace.Script, script, "failed to compile script " + script + ": line 3: failed to resolve nosuch: Unknown variable name", diag.D_IDENT_UNDEF},
		{dtrace.Name, "BEGIN { trace(nosuch); }", "invalid probe specifier BEGIN { trace(nosuch); }: in action list: failed to resolve nosuch: Unknown variable name", diag.D_IDENT_UNDEF},
		{dtrace.Function, "a:b:c:d", `invalid probe specifier a:b:c:d: invalid probe description "a:b:c:d": Overspecified probe description`, diag.D_PDESC_INVAL},
		{dtrace.Script, filepath.Join(dir, "none.d"), "failed to open " + filepath.Join(dir, "none.d") + ": No such file or directory", 0},
	}
	for _, tt := range tests {
		h := open(t, nil, nil)
		_, err := h.Compile(tt.spec, tt.text, 0)
		var ce *dtrace.CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *CompileError", tt.text, err)
			continue
		}
		if err.Error() != tt.msg {
			t.Errorf("%s:\n got %s\nwant %s", tt.text, err, tt.msg)
		}
		var de *diag.Error
		if tt.tag != 0 && (!errors.As(err, &de) || de.Tag != tt.tag) {
			t.Errorf("%s: D error %v, want tag %s", tt.text, de, tt.tag)
		}
	}
}

// TestOpenFiles checks that Open refuses a file named in the Config
// that cannot be used, saying what it is not.
func TestOpenFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("not a kernel\n"), 0o644)
	missing := filepath.Join(dir, "missing")
	tests := []struct {
		cfg    dtrace.Config
		option string
		is     error
	}{
		{dtrace.Config{Kernel: missing}, "--kernel", fs.ErrNotExist},
		{dtrace.Config{Kernel: text}, "--kernel", debuginfo.ErrNotELF},
		{dtrace.Config{Modules: []string{text}}, "--module", debuginfo.ErrNotELF},
		{dtrace.Config{BTF: missing}, "--btf", fs.ErrNotExist},
	}
	for _, tt := range tests {
		_, err := dtrace.Open(&tt.cfg)
		var fe *dtrace.FileError
		if !errors.As(err, &fe) || fe.Option != tt.option || !errors.Is(err, tt.is) {
			t.Errorf("Open(%+v) = %v; want a FileError of %s that is %v", tt.cfg, err, tt.option, tt.is)
		}
	}
}

// TestListProbes lists the dtrace provider's probes and the probes of a
// program's descriptions.
func TestListProbes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	var stdout, stderr bytes.Buffer
	h := open(t, nil, &stderr)
	p, err := h.Compile(dtrace.Name, "dtrace:::END, nosuch:::", dtrace.NoCode)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ListProbes(&stdout, false, p); err != nil {
		t.Fatal(err)
	}
	want := "   ID   PROVIDER            MODULE                          FUNCTION NAME\n" +
		"    2     dtrace                                                     END\n"
	if diff := cmp.Diff(want, stdout.String()); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("kdtrace: failed to match nosuch:::: No probe matches description\n", stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

// TestHeader writes the header of a provider a script defines.
func TestHeader(t *testing.T) {
	h := open(t, nil, nil)
	if err := h.SetOpt("headerstyle", "stubs"); err != nil {
		t.Fatal(err)
	}
	p, err := h.CompileScript("myapp.d", []byte("provider myapp { probe tick(int); };\n"), dtrace.Header)
	if err != nil {
		t.Fatal(err)
	}
	name, err := dtrace.HeaderName(p)
	if err != nil || name != "myapp.h" {
		t.Fatalf("HeaderName = %q, %v; want myapp.h", name, err)
	}
	var b bytes.Buffer
	if err := h.WriteHeader(&b, name, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "#define\tMYAPP_TICK(arg0)") {
		t.Errorf("header lacks MYAPP_TICK:\n%s", b.String())
	}
	if _, err := dtrace.HeaderName(); err == nil {
		t.Error("HeaderName of no script: no error")
	}
}

// TestPrintAfterCheck checks that Print gives, after compiling, the
// text Sugar wrote before the types were checked: checking leaves the
// tree as the rewrites made it.
func TestPrintAfterCheck(t *testing.T) {
	var stdout bytes.Buffer
	h := open(t, &stdout, nil)
	p, err := h.Compile(dtrace.Script, filepath.Join("..", "examples", "ifelse.d"), dtrace.Sugar)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := p.Print(&text); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stdout.String(), text.String()); diff != "" {
		t.Errorf("Print after compiling (-Sugar +Print):\n%s", diff)
	}
}

// TestListProbesBuffered checks that a listing to a file is buffered as
// dtrace's stdio buffers it: an unmatched description's error, written
// to the same file, comes before the listing.
func TestListProbesBuffered(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := dtrace.Open(&dtrace.Config{BTF: "none", Stdout: f, Stderr: f})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.SetOpt("zdefs", ""); err != nil {
		t.Fatal(err)
	}
	p, err := h.Compile(dtrace.Name, "nosuch:::", dtrace.NoCode)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ListProbes(f, false, p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := "kdtrace: failed to match nosuch:::: No probe matches description\n" +
		"   ID   PROVIDER            MODULE                          FUNCTION NAME\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("the file (-want +got):\n%s", diff)
	}
}

// TestEnableDestructive checks that Enable refuses, without the
// destructive option, a program that calls a destructive subroutine
// wherever the call hides, and only such programs.
func TestEnableDestructive(t *testing.T) {
	const out = `(copyoutstr("x", 0, 1), 1)`
	tests := []struct {
		name, src   string
		destructive bool
	}{
		{"none", `BEGIN /pid/ { @[pid] = sum(1); printf("%d", (strlen("x"), 1)); }`, false},
		{"action", `BEGIN { raise(9); }`, true},
		{"statement", `BEGIN { copyoutstr("x", 0, 1); }`, true},
		{"predicate", `BEGIN /pid && ` + out + `/ { trace(1); }`, true},
		{"inline", `inline int f = ` + out + `; BEGIN { trace(f); }`, true},
		{"inline in a predicate", `inline int f = ` + out + `; BEGIN /f/ { }`, true},
		{"aggregation key", `BEGIN { @[` + out + `] = count(); }`, true},
		{"aggregation argument", `BEGIN { @ = sum(` + out + `); }`, true},
		{"printf argument", `BEGIN { printf("%d\n", ` + out + `); }`, true},
		{"trace argument", `BEGIN { trace(` + out + `); }`, true},
		{"global assignment", `BEGIN { x = ` + out + `; }`, true},
		{"clause-local assignment", `BEGIN { this->x = ` + out + `; }`, true},
		{"thread-local assignment", `BEGIN { self->x = ` + out + `; }`, true},
		{"if body", `BEGIN { if (pid) { copyoutstr("x", 0, 1); } }`, true},
		{"else body", `BEGIN { if (pid) { trace(1); } else { copyoutstr("x", 0, 1); } }`, true},
		{"speculate", `BEGIN { speculate(` + out + `); trace(1); }`, true},
		{"exit", `BEGIN { exit(` + out + `); }`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range []bool{false, true} {
				h := open(t, nil, nil)
				if w {
					if err := h.SetOpt("destructive", ""); err != nil {
						t.Fatal(err)
					}
				}
				p, err := h.Compile(dtrace.Name, tt.src, 0)
				if err != nil {
					t.Fatal(err)
				}
				b, err := dtrace.DOF(p)
				if err != nil {
					t.Fatal(err)
				}
				k, err := enabling.Load(b, nil)
				if err != nil {
					t.Fatalf("the kernel's checks refuse the DOF: %v", err)
				}
				if k.Destructive != tt.destructive {
					t.Errorf("Destructive = %v, want %v", k.Destructive, tt.destructive)
				}
				tr, err := h.Enable(p)
				if err == nil {
					tr.Close()
				}
				if want := tt.destructive && !w; errors.Is(err, dtrace.ErrDestructive) != want {
					t.Errorf("-w %v: Enable: %v; want ErrDestructive: %v", w, err, want)
				}
			}
		})
	}
}

// TestEnableBufTooSmall checks that Enable refuses a buffer set smaller
// than a record when the programs need it, as dtrace_state_go does.
func TestEnableBufTooSmall(t *testing.T) {
	const (
		plain = `BEGIN { trace(1); }`
		agg   = `BEGIN { @ = count(); }`
		spec  = `BEGIN { speculate(speculation()); trace(1); }`
	)
	tests := []struct {
		option, value, src string
		refused            bool
	}{
		{"bufsize", "0", plain, true},
		{"bufsize", "7", plain, true},
		{"bufsize", "8", plain, false},
		{"aggsize", "0", agg, true},
		{"aggsize", "0", plain, false},
		{"specsize", "0", spec, true},
		{"specsize", "0", plain, false},
		{"specsize", "8", spec, false},
	}
	for _, tt := range tests {
		h := open(t, nil, nil)
		if err := h.SetOpt(tt.option, tt.value); err != nil {
			t.Fatal(err)
		}
		p, err := h.Compile(dtrace.Name, tt.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := h.Enable(p)
		if err == nil {
			tr.Close()
		}
		if errors.Is(err, dtrace.ErrBufTooSmall) != tt.refused {
			t.Errorf("%s=%s, %s: Enable: %v; want ErrBufTooSmall: %v", tt.option, tt.value, tt.src, err, tt.refused)
		}
	}
}

// TestRunImpatient checks that a run stopped a second time (Impatient
// closed) prints the last records but not the aggregations, as dtrace
// after a second SIGINT, and that a run stopped once prints both.
func TestRunImpatient(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("tracing needs root")
	}
	const src = `BEGIN { @ = count(); printf("go\n"); } END { printf("end\n"); }`
	for _, impatient := range []bool{false, true} {
		var stdout bytes.Buffer
		h := open(t, nil, nil)
		if err := h.SetOpt("quiet", ""); err != nil {
			t.Fatal(err)
		}
		p, err := h.Compile(dtrace.Name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := h.Enable(p)
		if err != nil {
			t.Fatal(err)
		}
		stop, again := make(chan struct{}), make(chan struct{})
		close(stop)
		if impatient {
			close(again)
		}
		status, err := tr.Run(dtrace.RunConfig{Out: &stdout, Err: io.Discard, Stop: stop, Impatient: again})
		tr.Close()
		if err != nil || status != 0 {
			t.Fatalf("impatient %v: Run = %d, %v", impatient, status, err)
		}
		want := "go\nend\n\n                1\n"
		if impatient {
			want = "go\nend\n\n"
		}
		if got := stdout.String(); got != want {
			t.Errorf("impatient %v: printed %q, want %q", impatient, got, want)
		}
	}
}
