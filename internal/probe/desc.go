package probe

// A Desc is a probe description: provider:module:function:name. An
// empty field matches anything; a field holding a glob character (see
// IsGlob) matches as a glob pattern; any other field matches only
// itself. The parser fills descriptions given with fewer fields from the
// right, so "BEGIN" is {"", "", "", "BEGIN"} and "read:entry" is
// {"", "", "read", "entry"}.
type Desc struct {
	Provider, Module, Function, Name string
}

// String returns the description as provider:module:function:name, the
// form of dtrace's messages.
func (d Desc) String() string {
	return d.Provider + ":" + d.Module + ":" + d.Function + ":" + d.Name
}

// A Pattern is one field of a description, ready to match.
type pattern struct {
	text string
	kind patternKind
}

type patternKind uint8

const (
	anyField     patternKind = iota // empty: matches anything
	literalField                    // matches itself only
	globField                       // matches as a glob
)

// NewPattern returns the pattern of a description field.
func NewPattern(field string) pattern {
	switch {
	case field == "":
		return pattern{}
	case isGlob(field):
		return pattern{field, globField}
	}
	return pattern{field, literalField}
}

// Match reports whether s matches the pattern.
func (p pattern) Match(s string) bool {
	switch p.kind {
	case anyField:
		return true
	case literalField:
		return s == p.text
	}
	return Glob(s, p.text)
}

// Literal returns the field when it matches only itself.
func (p pattern) Literal() (string, bool) {
	return p.text, p.kind == literalField
}

// Any reports whether the field is empty and so matches anything.
func (p pattern) Any() bool { return p.kind == anyField }

// String returns the field as written.
func (p pattern) String() string { return p.text }

// A Query is a description with its fields ready to match. Providers
// receive one and yield the probes it matches.
type query struct {
	Desc                             Desc
	Provider, Module, Function, Name pattern
}

// newQuery prepares d for matching.
func newQuery(d Desc) *query {
	return &query{
		Desc:     d,
		Provider: NewPattern(d.Provider),
		Module:   NewPattern(d.Module),
		Function: NewPattern(d.Function),
		Name:     NewPattern(d.Name),
	}
}

// Matches reports whether p matches the query in all four fields.
func (q *query) Matches(p *Probe) bool {
	return q.Provider.Match(p.Provider) && q.Module.Match(p.Module) &&
		q.Function.Match(p.Function) && q.Name.Match(p.Name)
}

// matchesMFN reports whether module, function and name match: what a
// provider checks, the catalog having matched its name.
func (q *query) matchesMFN(mod, fn, name string) bool {
	return q.Module.Match(mod) && q.Function.Match(fn) && q.Name.Match(name)
}
