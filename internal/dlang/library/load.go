package library

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// Config says what the libraries Load compiles may depend on.
type Config struct {
	// Modules are the kernel's type containers that the checker was
	// made with (check.Config.Modules). A library that depends on a
	// module that none of them is named is skipped.
	Modules []types.Module
	// Provider reports whether the provider called name exists, for
	// "#pragma D depends_on provider"; nil means every provider does.
	Provider func(name string) bool
	// SetOption runs a library's "#pragma D option" lines; nil ignores
	// them.
	SetOption func(name, value string) error
	// StringSize is the size of D's string type, as the checker has it
	// (check.Config.StringSize); 0 means dtrace's default, 256.
	StringSize int64
	// Lazy compiles a library only when a script first names
	// something it defines (check.Checker.OnUndefined): most scripts
	// need none of their hundreds of definitions, and those that read
	// kernel types cost the most. The library is compiled after those
	// it depends on; when any of the files is not embedded, all of them
	// are compiled then, in order, since what such a file holds beyond
	// names (a translator to another library's type) is not known
	// beforehand.
	Lazy bool
	// Late is told of the libraries skipped when compiled lazily.
	Late func(Skip)
	// SkipBroken skips a file that fails to compile, reporting it as a
	// Skip, instead of stopping Load. kdtrace's own libraries use it:
	// they are written against kernel types that vary from kernel to
	// kernel, and a member one kernel lacks must not stop every script.
	SkipBroken bool
}

// A Skip is a library file that Load left out.
type Skip struct {
	File string // the file's Name
	// Err says why: the *diag.Error of the "#pragma D depends_on" whose
	// module, provider or library is missing, or that a file of the same
	// base name came earlier.
	Err error
}

// An Error reports a library file that failed to load.
type Error struct {
	File string // the file's Name
	Err  error  // a *diag.Error for a compile error
}

func (e *Error) Error() string {
	var de *diag.Error
	if errors.As(e.Err, &de) && de.Pos.IsValid() && de.Pos.Filename() != "" {
		// The position names the file: "errno.d", line 3: message.
		return de.Format("", false)
	}
	return e.File + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Load compiles the library files into c, as dtrace loads its libraries
// before the first program: the declarations, inlines and translators
// they define are then known to every program c checks.
//
// Files are compiled one at a time, each parsed with c as its source of
// type names and its declarations checked as they are parsed, so that a
// library may use the types of those before it. A
// file that says "#pragma D depends_on library x.d" is compiled after
// the file whose base name is x.d; other files keep their order in
// files. Of files with the same base name, the first is used: list the
// directories that should override the system library first.
//
// A file that depends on a module, provider or library that is missing,
// or on a library that was itself skipped, is skipped and reported in
// the result, as dtrace skips such libraries. Any other failure stops
// Load with an *Error naming the file; the files compiled before it
// stay loaded. Load should be called once for a checker, with every
// library file.
func Load(c *check.Checker, files []File, cfg *Config) ([]Skip, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	libs, skipped := unique(files)
	order, err := sortLibs(libs)
	if err != nil {
		return skipped, err
	}
	loaded := make(map[string]bool)
	var later []*lib
	if cfg.Lazy {
		// A library that defines a struct, union or enum tag and
		// depends on nothing is compiled at once: the kernel may have
		// a type of the same tag, which is then never undefined, and
		// the library's must take its place in every program, as
		// dtrace's D definitions do.
		var now []*lib
		for _, l := range order {
			if l.facts.eager {
				now = append(now, l)
			} else {
				later = append(later, l)
			}
		}
		order = now
	}
	skipped, err = compileAll(c, order, cfg, loaded, skipped)
	if err != nil || len(later) == 0 {
		return skipped, err
	}
	each := !slices.ContainsFunc(later, func(l *lib) bool { return !l.own })
	c.OnUndefined(func(name string) bool {
		i := slices.IndexFunc(later, func(l *lib) bool { return defines(l, name) })
		if i < 0 {
			return false
		}
		libs := later
		if each {
			libs = withDeps(later, later[i])
		}
		later = slices.DeleteFunc(slices.Clone(later), func(l *lib) bool { return slices.Contains(libs, l) })
		late, err := compileAll(c, libs, cfg, loaded, nil)
		if cfg.Late != nil {
			for _, s := range late {
				cfg.Late(s)
			}
			if err != nil {
				cfg.Late(Skip{File: err.(*Error).File, Err: err})
			}
		}
		return err == nil
	})
	return skipped, nil
}

// Dependencies returns the check of "#pragma D depends_on" for the
// programs compiled after Load (parser.Config.DependsOn): a library
// dependency names a file Load compiled, given the files it was given
// and what it skipped.
func Dependencies(cfg *Config, files []File, skipped []Skip) func(class, name string) error {
	left := make(map[string]bool)
	for _, s := range skipped {
		left[s.File] = true
	}
	loaded := make(map[string]bool)
	for _, f := range files {
		if !left[f.Name] {
			loaded[filepath.Base(f.Name)] = true
		}
	}
	return func(class, name string) error {
		if !cfg.has(class, name, loaded) {
			return fmt.Errorf("program requires %s %s", class, name)
		}
		return nil
	}
}

// compileAll compiles libs in order, adding to skipped.
func compileAll(c *check.Checker, libs []*lib, cfg *Config, loaded map[string]bool, skipped []Skip) ([]Skip, error) {
	for _, lib := range libs {
		err := compile(c, lib.File, &parser.Config{
			Types:      c,
			Declare:    c.Declare,
			DefineTag:  c.DefineTag,
			AllowEmpty: true,
			StringSize: uint64(cfg.StringSize),
			SetOption:  cfg.SetOption,
			DependsOn: func(class, name string) error {
				if !cfg.has(class, name, loaded) {
					return fmt.Errorf("program requires %s %s", class, name)
				}
				return nil
			},
		})
		var de *diag.Error
		switch {
		case err == nil:
			loaded[lib.base] = true
		case errors.As(err, &de) && de.Tag == diag.D_PRAGMA_DEPEND:
			skipped = append(skipped, Skip{File: lib.Name, Err: err})
		case cfg.SkipBroken:
			skipped = append(skipped, Skip{File: lib.Name, Err: &Error{File: lib.Name, Err: err}})
		default:
			return skipped, &Error{File: lib.Name, Err: err}
		}
	}
	return skipped, nil
}

// defines reports whether l defines name: an inline, a typedef, a
// struct, union or enum tag ("struct tag") or an enumerator. An
// embedded library's names are known beforehand (zfacts.go); another
// library's text is scanned for them only when it mentions name at all:
// most names a program leaves undefined are errors, and scanning every
// library for each would cost more than the rest of a small script's
// compilation.
func defines(l *lib, name string) bool {
	if l.facts.names == nil {
		if !bytes.Contains(l.Text, []byte(name[strings.LastIndexByte(name, ' ')+1:])) {
			return false
		}
		l.facts.names = definedNames(l.Text)
	}
	_, ok := slices.BinarySearch(l.facts.names, name)
	return ok
}

// withDeps returns l and the libraries of libs it depends on, directly
// or through others, in the order of libs, which has each library after
// those it depends on (sortLibs).
func withDeps(libs []*lib, l *lib) []*lib {
	want := map[*lib]bool{l: true}
	for i := slices.Index(libs, l); i >= 0; i-- {
		if !want[libs[i]] {
			continue
		}
		for _, d := range libs[i].facts.deps {
			for _, dl := range libs[:i] {
				if dl.base == d {
					want[dl] = true
				}
			}
		}
	}
	return slices.DeleteFunc(slices.Clone(libs), func(l *lib) bool { return !want[l] })
}

// definedNames returns the names text defines, sorted and never nil. It
// scans the text rather than parsing it: a top-level statement that
// starts with inline defines the name before its = or [, a typedef the
// last name before its ;, and struct, union or enum followed by a name
// and { define that tag (and, for enum, the names listed in its
// braces).
func definedNames(text []byte) []string {
	set := map[string]bool{}
	scanNames(text, set)
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// definesTag reports whether text defines a struct, union or enum tag:
// a top-level struct, union or enum followed by a name and {, as
// scanNames finds them, without collecting the names.
func definesTag(text []byte) bool {
	depth := 0
	var last2, last string // the top-level statement's last tokens
	for t := range tokenSeq(text) {
		switch t {
		case "{":
			if depth == 0 && isTag(last2) {
				return true
			}
			depth++
		case "}":
			depth--
		case ";":
			if depth == 0 {
				last2, last = "", ""
				continue
			}
		}
		if depth == 0 {
			last2, last = last, t
		}
	}
	return false
}

func scanNames(text []byte, names map[string]bool) {
	toks := slices.Collect(tokenSeq(text))
	depth := 0
	var stmt []string // the top-level statement so far
	inEnum := false
	for i, t := range toks {
		switch t {
		case "{":
			depth++
			if depth == 1 && len(stmt) >= 2 && isTag(stmt[len(stmt)-2]) {
				names[stmt[len(stmt)-2]+" "+stmt[len(stmt)-1]] = true
			}
			inEnum = depth == 1 && len(stmt) >= 1 && (stmt[len(stmt)-1] == "enum" || len(stmt) >= 2 && stmt[len(stmt)-2] == "enum")
		case "}":
			depth--
			inEnum = false
		case ";":
			if depth == 0 {
				defineStmt(stmt, names)
				stmt = stmt[:0]
				continue
			}
		}
		if inEnum && depth == 1 && isName(t) && i+1 < len(toks) && (toks[i+1] == "," || toks[i+1] == "=" || toks[i+1] == "}") {
			names[t] = true
		}
		if depth == 0 {
			stmt = append(stmt, t)
		}
	}
}

// defineStmt records the name a top-level statement defines.
func defineStmt(stmt []string, names map[string]bool) {
	if len(stmt) == 0 {
		return
	}
	switch stmt[0] {
	case "inline":
		for i, t := range stmt {
			if (t == "=" || t == "[") && i > 0 && isName(stmt[i-1]) {
				names[stmt[i-1]] = true
				return
			}
		}
	case "typedef":
		if last := stmt[len(stmt)-1]; isName(last) {
			names[last] = true
		}
	}
}

func isTag(s string) bool { return s == "struct" || s == "union" || s == "enum" }

func isName(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	switch s {
	case "struct", "union", "enum", "inline", "typedef", "translator":
		return false
	}
	return true
}

// tokenSeq splits D text into names and single punctuation characters,
// leaving out comments, strings, numbers and control lines.
func tokenSeq(text []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		tokens(string(text), yield)
	}
}

func tokens(s string, yield func(string) bool) {
	lineStart := true
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case lineStart && c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if !yield(s[i:j]) {
				return
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		default:
			if !yield(s[i : i+1]) {
				return
			}
			i++
		}
		lineStart = false
	}
}

// has reports whether what a library depends on is there.
func (cfg *Config) has(class, name string, loaded map[string]bool) bool {
	switch class {
	case "module":
		for _, m := range cfg.Modules {
			if m.ModuleName() == name {
				return true
			}
		}
		return false
	case "provider":
		return cfg.Provider == nil || cfg.Provider(name)
	case "library":
		return loaded[name]
	}
	return false
}

// compile parses and checks one library file.
func compile(c *check.Checker, f File, cfg *parser.Config) error {
	prog, err := parser.ParseFile(f.Name, f.Text, cfg)
	if err != nil {
		return err
	}
	_, err = c.Check(prog)
	var de *diag.Error
	if errors.As(err, &de) && de.Tag == diag.D_EMPTY {
		// A library may declare only types and variables (dtrace
		// compiles libraries with DTRACE_C_EMPTY). The checker reports
		// an empty program after it has declared them.
		return nil
	}
	return err
}

// A lib is a library file with its base name and its facts.
type lib struct {
	File
	base  string
	facts libFacts
	own   bool // embedded: its facts were worked out beforehand
}

// libFacts are what Load reads of a library's text before it compiles
// the library. The embedded libraries' are worked out when kdtrace is
// built (zfacts.go), rather than by scanning them on every run.
type libFacts struct {
	deps  []string // the libraries it depends on
	eager bool     // it depends on nothing and defines a tag (see Load's Lazy)
	// names are the names it defines (definedNames); nil until worked
	// out, which Load does for a file not embedded only when a program
	// needs them (defines).
	names []string
}

// factsOf works out the facts of a library's text.
func factsOf(text []byte) libFacts {
	return libFacts{
		deps:  libraryDeps(text),
		eager: !bytes.Contains(text, []byte("depends_on")) && definesTag(text),
	}
}

// unique returns the files with their base names, leaving out each file
// whose base name an earlier file has.
func unique(files []File) ([]*lib, []Skip) {
	var libs []*lib
	var skipped []Skip
	first := make(map[string]string)
	for _, f := range files {
		base := filepath.Base(f.Name)
		if name, ok := first[base]; ok {
			skipped = append(skipped, Skip{File: f.Name,
				Err: fmt.Errorf("library of the same name already processed: %s", name)})
			continue
		}
		first[base] = f.Name
		l := &lib{File: f, base: base, own: f.facts != nil}
		if l.own {
			l.facts = *f.facts
		} else {
			l.facts = factsOf(f.Text)
		}
		libs = append(libs, l)
	}
	return libs, skipped
}

// libraryDeps returns the libraries that text names in "#pragma D
// depends_on library" lines. As dtrace's first pass over a library, it
// reads control lines only: lines whose first non-blank character is #.
func libraryDeps(text []byte) []string {
	var deps []string
	// Only the lines that say depends_on, of which most files have
	// none.
	for rest := text; ; {
		i := bytes.Index(rest, []byte("depends_on"))
		if i < 0 {
			return deps
		}
		start := bytes.LastIndexByte(rest[:i], '\n') + 1
		end := i + bytes.IndexByte(rest[i:], '\n')
		if end < i {
			end = len(rest)
		}
		line := strings.TrimLeft(string(rest[start:end]), " \t")
		rest = rest[end:]
		if !strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line[1:])
		if len(w) == 5 && w[0] == "pragma" && w[1] == "D" && w[2] == "depends_on" && w[3] == "library" {
			deps = append(deps, w[4])
		}
	}
}

// sortLibs orders libs so that each comes after the libraries it
// depends on, keeping their order otherwise. A dependency on a library
// not in libs is left for compile to report. A dependency cycle is an
// error.
func sortLibs(libs []*lib) ([]*lib, error) {
	byBase := make(map[string]*lib, len(libs))
	for _, l := range libs {
		byBase[l.base] = l
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make(map[*lib]int, len(libs))
	var order []*lib
	var path []string // the libraries being visited, for the error
	var visit func(l *lib) error
	visit = func(l *lib) error {
		switch state[l] {
		case done:
			return nil
		case visiting:
			return &Error{File: l.Name, Err: fmt.Errorf("cyclic dependency: %s => %s", strings.Join(path, " => "), l.base)}
		}
		state[l] = visiting
		path = append(path, l.base)
		for _, d := range l.facts.deps {
			if dep := byBase[d]; dep != nil {
				if err := visit(dep); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[l] = done
		order = append(order, l)
		return nil
	}
	for _, l := range libs {
		if err := visit(l); err != nil {
			return nil, err
		}
	}
	return order, nil
}
