package library_test

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/btf"
	"github.com/kdtrace/kdtrace/internal/dlang/library"
)

// kernelModules returns the running kernel's BTF as the checker's
// modules, or skips the test.
func kernelModules(t *testing.T) []types.Module {
	t.Helper()
	k, err := btf.Kernel()
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no kernel BTF: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return []types.Module{k}
}

// load returns a checker with mods and the libraries in files loaded.
func load(t *testing.T, mods []types.Module, files []library.File) (*check.Checker, []library.Skip) {
	t.Helper()
	c := check.NewChecker(&check.Config{Modules: mods})
	skipped, err := library.Load(c, files, &library.Config{Modules: mods})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c, skipped
}

// compile parses and checks the script src with c.
func compile(c *check.Checker, src string) (*check.Info, error) {
	prog, err := parser.ParseFile("script.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare})
	if err != nil {
		return nil, err
	}
	return c.Check(prog)
}

// tag returns the tag of err, a *diag.Error, or "" for nil.
func tag(err error) string {
	if err == nil {
		return ""
	}
	var de *diag.Error
	if !errors.As(err, &de) {
		return "not a *diag.Error: " + err.Error()
	}
	return de.Tag.String()
}

// skipTags summarizes skipped libraries as "file: reason", the reason
// being the error's tag for a *diag.Error and its text otherwise.
func skipTags(skipped []library.Skip) []string {
	var s []string
	for _, sk := range skipped {
		var de *diag.Error
		reason := sk.Err.Error()
		if errors.As(sk.Err, &de) {
			reason = de.Tag.String()
		}
		s = append(s, sk.File+": "+reason)
	}
	return s
}

// The embedded files, and whether each needs the kernel's types.
var embedded = []struct {
	name   string
	kernel bool
}{
	{"errno.d", false},
	{"in.d", false},
	{"io.d", true},
	{"ip.d", true},
	{"procfs.d", true},
	{"regs.d", false},
	{"sched.d", true},
	{"signal.d", false},
	{"tcp.d", true},
	{"time.d", false},
	{"udp.d", true},
	{"unistd.d", false},
}

func TestFiles(t *testing.T) {
	var names []string
	for _, f := range library.Files("linux") {
		names = append(names, f.Name)
		if len(f.Text) == 0 {
			t.Errorf("%s is empty", f.Name)
		}
	}
	var want []string
	for _, e := range embedded {
		want = append(want, e.name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf(`Files("linux") names (-want +got):`+"\n%s", diff)
	}
	if got := library.Files("freebsd"); got != nil {
		t.Errorf(`Files("freebsd") = %d files, want none: FreeBSD has its own`, len(got))
	}
}

// TestEachFile loads every embedded file alone into a fresh checker with
// D's built-in types only: the files that need the kernel's types are
// skipped for their dependency, the others load.
func TestEachFile(t *testing.T) {
	files := library.Files("linux")
	for _, e := range embedded {
		t.Run(e.name, func(t *testing.T) {
			i := slices.IndexFunc(files, func(f library.File) bool { return f.Name == e.name })
			if i < 0 {
				t.Fatalf("%s is not embedded", e.name)
			}
			_, skipped := load(t, nil, files[i:i+1])
			var want []string
			if e.kernel {
				want = []string{e.name + ": D_PRAGMA_DEPEND"}
			}
			if diff := cmp.Diff(want, skipTags(skipped)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKernel loads every embedded file with the running kernel's BTF and
// compiles scripts that use them.
func TestKernel(t *testing.T) {
	mods := kernelModules(t)
	c, skipped := load(t, mods, library.Files("linux"))
	if len(skipped) > 0 {
		t.Fatalf("skipped with kernel BTF: %v", skipTags(skipped))
	}
	tests := []struct {
		src  string
		want string // the error's tag, or "" to compile
	}{
		{`BEGIN { trace(curpsinfo->pr_pid); trace(curlwpsinfo->pr_pri); trace(regs[R_RSI]);
			trace(EINVAL); trace(SIGUSR1); trace(DTRACEFLT_BADADDR); }`, ""},
		{`ERROR /arg4 == DTRACEFLT_BADADDR/ { trace(uregs[R_PC]); }`, ""},
		{`BEGIN { trace(EINVAL + ENOSUCHERRNO); }`, "D_IDENT_UNDEF"},
		{`syscall::kill:entry /arg1 == SIGKILL/ { printf("%s[%d] by %d", stringof(curpsinfo->pr_fname),
			curpsinfo->pr_ppid, curpsinfo->pr_uid); }`, ""},
		{`BEGIN { printf("%c %d %s %d", curlwpsinfo->pr_sname, curlwpsinfo->pr_state,
			stringof(curlwpsinfo->pr_clname), curlwpsinfo->pr_onpro); }`, ""},
		{`BEGIN { trace(xlate <psinfo_t *> (curthread->real_parent)->pr_pid); }`, ""},
		{`BEGIN { trace(xlate <lwpsinfo_t> (curthread).pr_lwpid); }`, ""},
		{`BEGIN { trace(curpsinfo->pr_nlwp + curpsinfo->pr_pgid + curpsinfo->pr_sid + curpsinfo->pr_egid); }`, ""},
		{`BEGIN { trace(curpsinfo->pr_argv); trace(stringof(curpsinfo->pr_psargs)); }`, ""},
		{`BEGIN { trace(fds[0].fi_name); trace(fds[1].fi_offset); trace(fds[2].fi_oflags & O_ACCMODE); }`, ""},
		{`BEGIN { trace(xlate <bufinfo_t *> ((struct bio *)arg0)->b_flags & B_READ);
			trace(xlate <devinfo_t *> ((struct bio *)arg0)->dev_statname); }`, ""},
		{`BEGIN { trace(curcpu->cpu_id); trace(curcpu->cpu_pset); trace(xlate <cpuinfo_t *> (curthread->real_parent)->cpu_id); }`, ""},
		{`BEGIN { trace(curlwpsinfo->pr_flag & PR_IDLE); }`, ""},
		{`BEGIN { printf("%s %s", cwd, root); }`, ""},
		// Members Linux cannot fill are not translated.
		{`BEGIN { trace(curlwpsinfo->pr_wchan); }`, "D_XLATE_NOCONV"},
		{`BEGIN { trace(curcpu->cpu_chip); }`, "D_XLATE_NOCONV"},
		{`BEGIN { trace(curpsinfo->pr_start); }`, "D_XLATE_NOCONV"},
	}
	for _, tt := range tests {
		_, err := compile(c, tt.src)
		if got := tag(err); got != tt.want {
			t.Errorf("%s\ngot %q (%v), want %q", tt.src, got, err, tt.want)
		}
	}
}

// constants returns the values of the integer inlines called names, as
// the checker sees them from a script.
func constants(t *testing.T, c *check.Checker, names []string) map[string]int64 {
	t.Helper()
	var b strings.Builder
	b.WriteString("BEGIN {\n")
	for _, n := range names {
		b.WriteString("\ttrace(" + n + ");\n")
	}
	b.WriteString("}\n")
	info, err := compile(c, b.String())
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]int64)
	for e, v := range info.Values {
		if id, ok := e.(*ast.Ident); ok && v.Const {
			got[id.Name] = int64(int32(v.Int))
		}
	}
	return got
}

// regs are the indices of illumos' regs.d for x86 (sys/regset.h).
var regs = map[string]int64{
	"R_GS": 0, "R_FS": 1, "R_ES": 2, "R_DS": 3, "R_EDI": 4, "R_ESI": 5, "R_EBP": 6, "R_ESP": 7,
	"R_EBX": 8, "R_EDX": 9, "R_ECX": 10, "R_EAX": 11, "R_TRAPNO": 12, "R_ERR": 13, "R_EIP": 14,
	"R_CS": 15, "R_EFL": 16, "R_UESP": 17, "R_SS": 18,
	"R_PC": 14, "R_FP": 6, "R_SP": 17, "R_PS": 16, "R_R0": 11, "R_R1": 8,
	"R_R15": 19, "R_R14": 20, "R_R13": 21, "R_R12": 22, "R_R11": 23, "R_R10": 24, "R_R9": 25,
	"R_R8": 26, "R_RDI": 27, "R_RSI": 28, "R_RBP": 29, "R_RBX": 30, "R_RDX": 31, "R_RCX": 32,
	"R_RAX": 33, "R_RIP": 36, "R_RFL": 38, "R_RSP": 39, "R_FSBASE": 45, "R_GSBASE": 46,
}

// faults are sys/dtrace.h's DTRACEFLT_* values.
var faults = map[string]int64{
	"DTRACEFLT_UNKNOWN": 0, "DTRACEFLT_BADADDR": 1, "DTRACEFLT_BADALIGN": 2, "DTRACEFLT_ILLOP": 3,
	"DTRACEFLT_DIVZERO": 4, "DTRACEFLT_NOSCRATCH": 5, "DTRACEFLT_KPRIV": 6, "DTRACEFLT_UPRIV": 7,
	"DTRACEFLT_TUPOFLOW": 8, "DTRACEFLT_BADSTACK": 9, "DTRACEFLT_LIBRARY": 1000,
}

// signals are the Linux x86-64 signal numbers, with the kernel's
// real-time bounds.
var signals = map[string]int64{
	"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGIOT": 6,
	"SIGBUS": 7, "SIGFPE": 8, "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12,
	"SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15, "SIGSTKFLT": 16, "SIGCHLD": 17, "SIGCLD": 17,
	"SIGCONT": 18, "SIGSTOP": 19, "SIGTSTP": 20, "SIGTTIN": 21, "SIGTTOU": 22, "SIGURG": 23,
	"SIGXCPU": 24, "SIGXFSZ": 25, "SIGVTALRM": 26, "SIGPROF": 27, "SIGWINCH": 28, "SIGIO": 29,
	"SIGPOLL": 29, "SIGPWR": 30, "SIGSYS": 31, "SIGRTMIN": 32, "SIGRTMAX": 64,
	"CLD_EXITED": 1, "CLD_KILLED": 2, "CLD_DUMPED": 3, "CLD_TRAPPED": 4, "CLD_STOPPED": 5,
	"CLD_CONTINUED": 6,
}

// errnos spot-checks errno.d where the C headers are not installed.
var errnos = map[string]int64{
	"EPERM": 1, "ENOENT": 2, "EINTR": 4, "EAGAIN": 11, "EWOULDBLOCK": 11, "EINVAL": 22,
	"EDEADLK": 35, "EDEADLOCK": 35, "ENOSYS": 38, "EOPNOTSUPP": 95, "ENOTSUP": 95,
	"ETIMEDOUT": 110, "EHWPOISON": 133,
}

func TestConstants(t *testing.T) {
	c, _ := load(t, nil, library.Files("linux"))
	for _, tt := range []struct {
		what string
		want map[string]int64
	}{
		{"regs.d", regs},
		{"unistd.d", faults},
		{"signal.d", signals},
		{"errno.d", errnos},
		{"errno.d against asm-generic/errno*.h", headerDefines(t, `E[A-Z0-9]+`,
			"/usr/include/asm-generic/errno-base.h", "/usr/include/asm-generic/errno.h")},
	} {
		if tt.want == nil {
			continue
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range tt.want {
				if !yield(n) {
					return
				}
			}
		})
		if diff := cmp.Diff(tt.want, constants(t, c, names)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.what, diff)
		}
	}
}

// TestSignalHeader compares signal.d with the C header of the machine's
// kernel, where it is installed.
func TestSignalHeader(t *testing.T) {
	want := headerDefines(t, `SIG[A-Z0-9]+|_NSIG`,
		"/usr/include/x86_64-linux-gnu/asm/signal.h", "/usr/include/asm/signal.h")
	if want == nil {
		t.Skip("no asm/signal.h")
	}
	// Obsolete names and sizes that signal.d leaves out.
	for _, n := range []string{"_NSIG", "SIGLOST", "SIGUNUSED", "SIGSTKSZ", "MINSIGSTKSZ"} {
		delete(want, n)
	}
	c, _ := load(t, nil, library.Files("linux"))
	got := constants(t, c, slices.Sorted(func(yield func(string) bool) {
		for n := range want {
			if !yield(n) {
				return
			}
		}
	}))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("signal.d against asm/signal.h (-want +got):\n%s", diff)
	}
}

// headerDefines reads "#define NAME VALUE" lines from the first of files
// that exists (all of them for errno's two headers), keeping names that
// match pattern and resolving values that name another define. It
// returns nil when no file exists.
func headerDefines(t *testing.T, pattern string, files ...string) map[string]int64 {
	t.Helper()
	re := regexp.MustCompile(`^#define\s+(` + pattern + `)\s+(\w+)`)
	raw := make(map[string]string)
	found := false
	for _, name := range files {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		found = true
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				raw[m[1]] = m[2]
			}
		}
		f.Close()
		if strings.Contains(pattern, "SIG") {
			break // one signal.h is enough
		}
	}
	if !found {
		return nil
	}
	defs := make(map[string]int64)
	var resolve func(name string, depth int) (int64, bool)
	resolve = func(name string, depth int) (int64, bool) {
		v, ok := raw[name]
		if !ok || depth > 8 {
			return 0, false
		}
		if n, err := strconv.ParseInt(v, 0, 64); err == nil {
			return n, true
		}
		return resolve(v, depth+1)
	}
	for name := range raw {
		if v, ok := resolve(name, 0); ok {
			defs[name] = v
		}
	}
	return defs
}

// lib makes a library file.
func lib(name, text string) library.File { return library.File{Name: name, Text: []byte(text)} }

// fakeModule is a kernel module with no types, for dependencies.
type fakeModule string

func (m fakeModule) ModuleName() string                  { return string(m) }
func (fakeModule) LookupType(string) (types.Type, error) { return nil, nil }

func TestDependencies(t *testing.T) {
	tests := []struct {
		name    string
		files   []library.File
		mods    []types.Module
		skipped []string // file: tag
		defined []string // identifiers a script can use afterwards
		missing []string // identifiers it cannot
	}{{
		name: "missing module",
		files: []library.File{
			lib("a.d", "#pragma D depends_on module nosuch\ninline int A = 1;"),
			lib("b.d", "inline int B = 2;"),
		},
		skipped: []string{"a.d: D_PRAGMA_DEPEND"},
		defined: []string{"B"},
		missing: []string{"A"},
	}, {
		name: "present module",
		files: []library.File{
			lib("a.d", "#pragma D depends_on module ext4\ninline int A = 1;"),
		},
		mods:    []types.Module{fakeModule("ext4")},
		defined: []string{"A"},
	}, {
		name: "missing library",
		files: []library.File{
			lib("a.d", "#pragma D depends_on library nosuch.d\ninline int A = 1;"),
		},
		skipped: []string{"a.d: D_PRAGMA_DEPEND"},
		missing: []string{"A"},
	}, {
		name: "depends on a skipped library",
		files: []library.File{
			lib("c.d", "#pragma D depends_on library b.d\ninline int C = B + 1;"),
			lib("b.d", "#pragma D depends_on module nosuch\ninline int B = 2;"),
			lib("d.d", "inline int D = 4;"),
		},
		skipped: []string{"b.d: D_PRAGMA_DEPEND", "c.d: D_PRAGMA_DEPEND"},
		defined: []string{"D"},
		missing: []string{"B", "C"},
	}, {
		name: "dependency listed later",
		files: []library.File{
			lib("/lib/z/c.d", "#pragma D depends_on library b.d\ninline int C = B + A;"),
			lib("/lib/y/b.d", "  #  pragma D depends_on library a.d\ninline int B = A + 1;"),
			lib("/lib/x/a.d", "typedef int a_t;\ninline a_t A = 1;"),
		},
		defined: []string{"A", "B", "C"},
	}, {
		name: "same name: the first wins",
		files: []library.File{
			lib("/override/a.d", "inline int A = 1;"),
			lib("a.d", "inline int A = 2; inline int B = 3;"),
		},
		skipped: []string{"a.d: library of the same name already processed: /override/a.d"},
		defined: []string{"A"},
		missing: []string{"B"},
	}, {
		name: "declarations only",
		files: []library.File{
			lib("types.d", "typedef int lib_t;\nstruct libs { lib_t n; };"),
			lib("use.d", "#pragma D depends_on library types.d\ninline int N = sizeof (struct libs);"),
		},
		defined: []string{"N"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, skipped := load(t, tt.mods, tt.files)
			if diff := cmp.Diff(tt.skipped, skipTags(skipped)); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			for _, name := range tt.defined {
				if _, err := compile(c, "BEGIN { trace("+name+"); }"); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			for _, name := range tt.missing {
				if _, err := compile(c, "BEGIN { trace("+name+"); }"); tag(err) != "D_IDENT_UNDEF" {
					t.Errorf("%s: got %v, want D_IDENT_UNDEF", name, err)
				}
			}
		})
	}
}

func TestProvider(t *testing.T) {
	files := []library.File{
		lib("io.d", "#pragma D depends_on provider io\ninline int IO = 1;"),
		lib("ip.d", "#pragma D depends_on provider ip\ninline int IP = 1;"),
	}
	c := check.NewChecker(&check.Config{})
	skipped, err := library.Load(c, files, &library.Config{Provider: func(name string) bool { return name == "io" }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ip.d: D_PRAGMA_DEPEND"}, skipTags(skipped)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if got, want := skipped[0].Err.Error(), `"ip.d", line 1: program requires provider ip`; got != want {
		t.Errorf("skip reason %q, want %q", got, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		files []library.File
		file  string // the file the error names
		tag   string
		msg   string
	}{{
		name: "syntax",
		files: []library.File{
			lib("good.d", "inline int G = 1;"),
			lib("/usr/lib/kdtrace/bad.d", "inline int A = 1;\ninline int B = ;\n"),
		},
		file: "/usr/lib/kdtrace/bad.d",
		tag:  "D_SYNTAX",
		msg:  `"/usr/lib/kdtrace/bad.d", line 2: syntax error near ";"`,
	}, {
		name:  "type",
		files: []library.File{lib("bad.d", "\n\ninline int A = \"string\";\n")},
		file:  "bad.d",
		tag:   "D_OP_INCOMPAT",
		msg:   `"bad.d", line 3: inline A definition uses incompatible types: "int" = "string"`,
	}, {
		name:  "undefined",
		files: []library.File{lib("bad.d", "inline int A = NOSUCH;")},
		file:  "bad.d",
		tag:   "D_IDENT_UNDEF",
		msg:   `"bad.d", line 1: failed to resolve NOSUCH: Unknown variable name`,
	}, {
		name:  "pragma",
		files: []library.File{lib("bad.d", "#pragma D depends_on nonsense x\ninline int A = 1;")},
		file:  "bad.d",
		tag:   "D_PRAGMA_INVAL",
		msg:   `"bad.d", line 1: invalid class nonsense specified by #pragma depends_on`,
	}, {
		name: "cycle",
		files: []library.File{
			lib("a.d", "#pragma D depends_on library b.d\ninline int A = 1;"),
			lib("b.d", "#pragma D depends_on library a.d\ninline int B = 1;"),
		},
		file: "a.d",
		msg:  "a.d: cyclic dependency: a.d => b.d => a.d",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := check.NewChecker(&check.Config{})
			_, err := library.Load(c, tt.files, nil)
			var le *library.Error
			if !errors.As(err, &le) {
				t.Fatalf("Load: %v, want a *library.Error", err)
			}
			if le.File != tt.file {
				t.Errorf("Error.File = %q, want %q", le.File, tt.file)
			}
			if tt.tag != "" {
				if got := tag(le.Err); got != tt.tag {
					t.Errorf("tag %s, want %s", got, tt.tag)
				}
			}
			if got := err.Error(); got != tt.msg {
				t.Errorf("Error() = %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestSetOption(t *testing.T) {
	var got []string
	cfg := &library.Config{SetOption: func(name, value string) error {
		got = append(got, name+"="+value)
		return nil
	}}
	c := check.NewChecker(&check.Config{})
	files := []library.File{lib("opt.d", "#pragma D option strsize=512\ninline int A = 1;")}
	if _, err := library.Load(c, files, cfg); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"strsize=512"}, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"b.d":       "inline int B = A + 1;\n#pragma D depends_on library a.d\n",
		"a.d":       "inline int A = 1;",
		"notes.txt": "not D",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := library.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	want := []string{filepath.Join(dir, "a.d"), filepath.Join(dir, "b.d")}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("ReadDir names (-want +got):\n%s", diff)
	}
	c, _ := load(t, nil, append(library.Files("linux"), files...))
	if _, err := compile(c, "BEGIN { trace(B + EINVAL); }"); err != nil {
		t.Error(err)
	}

	if _, err := library.ReadDir(filepath.Join(dir, "nosuch")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir of a missing directory: %v, want ErrNotExist", err)
	}
}

func TestSystem(t *testing.T) {
	files, err := library.System("linux")
	if err != nil || len(files) != len(embedded) {
		t.Errorf(`System("linux") = %d files, %v; want the %d embedded`, len(files), err, len(embedded))
	}
	if _, err := os.Stat(library.SystemDir); errors.Is(err, fs.ErrNotExist) {
		if files, err := library.System("freebsd"); files != nil || err != nil {
			t.Errorf(`System("freebsd") without %s = %d files, %v; want none`, library.SystemDir, len(files), err)
		}
	}
}

func TestSkipBroken(t *testing.T) {
	files := []library.File{
		lib("a.d", "inline int A = nosuch;"),
		lib("b.d", "inline int B = 2;"),
	}
	c := check.NewChecker(&check.Config{})
	skipped, err := library.Load(c, files, &library.Config{SkipBroken: true})
	if err != nil {
		t.Fatalf("Load with SkipBroken: %v", err)
	}
	if got := skipTags(skipped); len(got) != 1 || got[0] != "a.d: D_IDENT_UNDEF" {
		t.Errorf("skipped %v, want [a.d: D_IDENT_UNDEF]", got)
	}
	if _, err := compile(c, "BEGIN { trace(B); }"); err != nil {
		t.Errorf("B after a broken library: %v", err)
	}
}

func TestScriptDependencies(t *testing.T) {
	files := []library.File{
		lib("a.d", "inline int A = 1;"),
		lib("b.d", "#pragma D depends_on module nosuch\ninline int B = 2;"),
		lib("x/a.d", "inline int A2 = 1;"),
	}
	cfg := &library.Config{}
	c := check.NewChecker(&check.Config{})
	skipped, err := library.Load(c, files, cfg)
	if err != nil {
		t.Fatal(err)
	}
	deps := library.Dependencies(cfg, files, skipped)
	for _, tt := range []struct {
		class, name string
		ok          bool
	}{
		{"library", "a.d", true},
		{"library", "b.d", false},
		{"library", "net.d", false},
		{"module", "nosuch", false},
		{"provider", "sched", true},
	} {
		if err := deps(tt.class, tt.name); (err == nil) != tt.ok {
			t.Errorf("depends_on %s %s: %v, want ok %v", tt.class, tt.name, err, tt.ok)
		}
	}
}

func TestLazy(t *testing.T) {
	files := []library.File{
		lib("a.d", "inline int A = 1;"),
		lib("k.d", "#pragma D depends_on module ext4\ninline int K = A + 1;\ntypedef int k_t;\nstruct\n\tks { int x; };"),
		lib("l.d", "#pragma D depends_on library k.d\ninline int L = K + 1;\ninline int M[int i] = i * L;"),
	}
	mods := []types.Module{fakeModule("ext4")}
	load := func() (*check.Checker, *[]library.Skip) {
		c := check.NewChecker(&check.Config{Modules: mods})
		late := new([]library.Skip)
		if _, err := library.Load(c, files, &library.Config{Modules: mods, Lazy: true, Late: func(s library.Skip) { *late = append(*late, s) }}); err != nil {
			t.Fatal(err)
		}
		return c, late
	}
	// Nothing of k.d and l.d is compiled until a script names it: an
	// inline, an array inline, a typedef or a struct tag, however the
	// text spaces it.
	for _, src := range []string{
		"BEGIN { trace(L); }",
		"BEGIN { trace(M[2]); }",
		"BEGIN { x = (k_t)1; trace(K); }",
		"BEGIN { trace(sizeof (struct ks)); }",
	} {
		c, late := load()
		if _, err := compile(c, "BEGIN { y = 1; trace(y); }"); err != nil {
			t.Fatal(err)
		}
		if _, err := compile(c, src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
		if len(*late) != 0 {
			t.Errorf("%s: late skips: %v", src, *late)
		}
	}
	c, _ := load()
	for _, src := range []string{"BEGIN { trace(NOSUCH); }", "BEGIN { trace(sizeof (struct nosuch)); }"} {
		if _, err := compile(c, src); err == nil {
			t.Errorf("%s: an undefined name compiled", src)
		}
	}
}

// TestLazyEach checks that a name an embedded library defines compiles
// that library, after those it depends on, and no other: without the
// kernel's types, the libraries that need them are skipped only as a
// script names what they define.
func TestLazyEach(t *testing.T) {
	c := check.NewChecker(&check.Config{})
	var late []library.Skip
	if _, err := library.Load(c, library.Files("linux"), &library.Config{Lazy: true, SkipBroken: true,
		Late: func(s library.Skip) { late = append(late, s) }}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		src  string
		ok   bool
		late []string
	}{
		{"BEGIN { trace(EPERM); }", true, nil},
		{"BEGIN { trace(SIGKILL + EINVAL); }", true, nil},
		{"BEGIN { trace(curpsinfo); }", false, []string{"procfs.d: D_PRAGMA_DEPEND"}},
		{"BEGIN { trace(TCP_STATE_CLOSED); }", false, []string{"ip.d: D_PRAGMA_DEPEND", "tcp.d: D_PRAGMA_DEPEND"}},
		{"BEGIN { trace(sizeof (udpinfo_t)); }", false, []string{"udp.d: D_PRAGMA_DEPEND"}}, // ip.d was skipped
		{"BEGIN { trace(curpsinfo); }", false, nil},
	} {
		late = nil
		if _, err := compile(c, tt.src); (err == nil) != tt.ok {
			t.Errorf("%s: %v, want compiled %v", tt.src, err, tt.ok)
		}
		if diff := cmp.Diff(tt.late, skipTags(late)); diff != "" {
			t.Errorf("%s: libraries skipped (-want +got):\n%s", tt.src, diff)
		}
	}
}

// prFlags are the pr_flag bits of illumos's sys/procfs.h.
var prFlags = map[string]int64{
	"PR_STOPPED": 0x1, "PR_ISTOP": 0x2, "PR_DSTOP": 0x4, "PR_STEP": 0x8, "PR_ASLEEP": 0x10,
	"PR_PCINVAL": 0x20, "PR_ASLWP": 0x40, "PR_AGENT": 0x80, "PR_DETACH": 0x100, "PR_DAEMON": 0x200,
	"PR_IDLE": 0x400, "PR_ISSYS": 0x1000, "PR_VFORKP": 0x2000, "PR_ORPHAN": 0x4000,
	"PR_NOSIGCHLD": 0x8000, "PR_WAITPID": 0x10000, "PR_FORK": 0x100000, "PR_RLC": 0x200000,
	"PR_KLC": 0x400000, "PR_ASYNC": 0x800000, "PR_MSACCT": 0x1000000, "PR_BPTADJ": 0x2000000,
	"PR_PTRACE": 0x4000000, "PR_MSFORK": 0x8000000,
}

// TestPRFlags checks that each of illumos's pr_flag bits is either
// defined by procfs.d, with illumos's value, or refused with a reason
// (Refused), never both.
func TestPRFlags(t *testing.T) {
	c, _ := load(t, kernelModules(t), library.Files("linux"))
	refused := library.Refused("linux")
	var defined []string
	for name := range prFlags {
		if _, ok := refused[name]; !ok {
			defined = append(defined, name)
		}
	}
	want := map[string]int64{}
	for _, name := range defined {
		want[name] = prFlags[name]
	}
	if diff := cmp.Diff(want, constants(t, c, defined)); diff != "" {
		t.Errorf("procfs.d's PR_* (-want +got):\n%s", diff)
	}
	for name, why := range refused {
		if _, ok := prFlags[name]; !ok {
			t.Errorf("%s is refused (%s) but is no pr_flag bit of illumos", name, why)
		}
		if _, err := compile(c, "BEGIN { trace("+name+"); }"); tag(err) != "D_IDENT_UNDEF" {
			t.Errorf("%s is refused, yet a library defines it: %v", name, err)
		}
	}
	if got := library.Refused("freebsd"); got != nil {
		t.Errorf(`Refused("freebsd") = %v, want none: FreeBSD's libraries are the system's`, got)
	}
}

// TestTimeTypes checks time.d's types against C's on LP64 Linux:
// hrtime_t is signed and 64 bits, struct timespec is glibc's.
func TestTimeTypes(t *testing.T) {
	c, _ := load(t, nil, library.Files("linux"))
	for expr, want := range map[string]uint64{"sizeof (hrtime_t)": 8, "sizeof (time_t)": 8,
		"sizeof (struct timespec)": 16, "offsetof(struct timespec, tv_nsec)": 8} {
		info, err := compile(c, "BEGIN { trace("+expr+"); }")
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		for e := range info.Values {
			if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 1 {
				if a := info.Values[call.Args[0]]; a == nil || !a.Const || a.Int != want {
					t.Errorf("%s = %+v, want the constant %d", expr, a, want)
				}
			}
		}
	}
	info, err := compile(c, "BEGIN { trace((hrtime_t)0); }")
	if err != nil {
		t.Fatal(err)
	}
	casts := 0
	for e, v := range info.Values {
		if _, ok := e.(*ast.CastExpr); ok {
			casts++
			if i, ok := types.Resolve(v.Type).(*types.Int); !ok || !i.Signed || i.Bytes != 8 {
				t.Errorf("hrtime_t is %v, want a signed 64-bit integer", v.Type)
			}
		}
	}
	if casts != 1 {
		t.Errorf("%d casts checked, want 1", casts)
	}
}
