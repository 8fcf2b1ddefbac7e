package parser

import (
	"github.com/kdtrace/kdtrace/dlang/constant"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

func (p *parser) parseProgram() {
	p.lex.scope = scopeClause
	p.next()
	for p.lex.tok != token.EOF {
		p.parseExternal()
	}
}

// parseExternal parses one top-level item. The current token was scanned
// in the outer scope.
func (p *parser) parseExternal() {
	var d ast.Decl
	switch p.lex.tok {
	case token.PSPEC, token.INT:
		d = p.parseClause()
	case token.INLINE:
		d = p.parseInline()
	case token.XLATOR:
		d = p.parseTranslator()
	case token.PROVIDER:
		d = p.parseProvider()
	default:
		if !p.startsDeclSpec() {
			p.syntaxError()
		}
		d = p.parseDeclaration()
	}
	p.prog.Decls = append(p.prog.Decls, d)
	if _, ok := d.(*ast.Clause); !ok && p.cfg.Declare != nil {
		if err := p.cfg.Declare(p.prog, d); err != nil {
			de, ok := err.(*diag.Error)
			if !ok {
				de = diag.Errorf(d.Pos(), diag.D_UNKNOWN, "%v", err)
			}
			p.fail(de)
		}
	}
}

// ----------------------------------------------------------------------------
// Clauses

func (p *parser) parseClause() *ast.Clause {
	c := &ast.Clause{}
	for {
		d := p.parseProbeDesc()
		if p.cfg.Probe != nil {
			p.cfg.Probe(d)
		}
		c.Probes = append(c.Probes, d)
		p.next()
		if p.lex.tok != token.COMMA {
			break
		}
		p.next()
		if p.lex.tok != token.PSPEC && p.lex.tok != token.INT {
			p.syntaxError()
		}
	}
	// The probe specifier list is complete: what follows is scanned in
	// the expression scope.
	p.lex.scope = scopeExpr
	if p.lex.tok == token.DIV {
		p.next()
		c.Pred = p.parseExpr()
		if p.lex.tok != token.EPRED {
			p.syntaxError()
		}
		p.next()
		if p.lex.tok != token.LBRACE {
			p.fail(diag.Errorf(ast.DiagPos(c.Pred), diag.D_SYNTAX, "expected actions { } following probe description and predicate"))
		}
	}
	if p.lex.tok != token.LBRACE {
		if !p.cfg.CommandLine {
			p.fail(diag.Errorf(c.Probes[0].DescPos, diag.D_SYNTAX, "expected predicate and/or actions following probe description"))
		}
		// The token after the list was scanned in the outer scope; the
		// next clause starts there.
		p.lex.scope = scopeClause
		return c
	}
	p.next()
	c.Body = p.parseStmtList()
	p.expectClosing(token.RBRACE, scopeClause)
	c.DiagPos = p.prevEnd
	return c
}

// parseProbeDesc converts the current PSPEC or probe-ID token into a
// probe description, as dtrace_xstr2desc does: fields are taken from the
// right, name first, and macro references are expanded.
func (p *parser) parseProbeDesc() *ast.ProbeDesc {
	d := &ast.ProbeDesc{DescPos: p.lex.pos}
	if p.lex.tok == token.INT {
		if p.lex.ival > 0xffffffff || p.lex.ival == 0 {
			p.fail(diag.Errorf(p.lex.pos, diag.D_PDESC_INVAL, "identifier %d exceeds maximum probe id", p.lex.ival))
		}
		d.ID = uint32(p.lex.ival)
		return d
	}
	text := p.lex.lit
	if strings.IndexByte(text, '$') >= 0 {
		text = p.expandSpec(text)
	}
	fields := strings.Split(text, ":")
	// dtrace_xstr2desc takes the fields from the right, name first, and
	// refuses each that does not fit its dtrace_probedesc_t member
	// before it finds that there are too many.
	dst := []*string{&d.Name, &d.Function, &d.Module, &d.Provider}
	for i := range fields {
		if i == len(dst) {
			p.fail(diag.Errorf(p.lex.pos, diag.D_PDESC_INVAL, "invalid probe description \"%s\": Overspecified probe description", p.lex.lit))
		}
		f := fields[len(fields)-1-i]
		if len(f) >= p.componentLen(i) {
			// ENAMETOOLONG, which dtrace_errmsg words as strerror does.
			p.fail(diag.Errorf(p.lex.pos, diag.D_PDESC_INVAL, "invalid probe description \"%s\": File name too long", p.lex.lit))
		}
		*dst[i] = f
	}
	return d
}

// componentLen returns the size, with its terminating NUL, of the
// kernel's field for probe description component i counted from the
// right: DTRACE_NAMELEN, DTRACE_FUNCNAMELEN, DTRACE_MODNAMELEN,
// DTRACE_PROVNAMELEN.
func (p *parser) componentLen(i int) int {
	if i == 1 {
		if p.cfg.FuncNameLen > 0 {
			return p.cfg.FuncNameLen
		}
		return 192 // FreeBSD 14 and later
	}
	return 64
}

// expandSpec substitutes $N and $name references in a probe specifier.
func (p *parser) expandSpec(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if text[i] != '$' {
			b.WriteByte(text[i])
			continue
		}
		j := i + 1
		for j < len(text) && (isLetter(text[j]) || isDigit(text[j])) {
			j++
		}
		v, _, ok := p.macro(text[i+1:j], false)
		if !ok || j == i+1 {
			p.fail(diag.Errorf(p.lex.pos, diag.D_PDESC_INVAL, "invalid probe description \"%s\": Undefined macro variable in probe description", p.lex.lit))
		}
		b.WriteString(v)
		i = j - 1
	}
	return b.String()
}

// ----------------------------------------------------------------------------
// Declarations

// startsDeclSpec reports whether the current token can begin declaration
// specifiers.
func (p *parser) startsDeclSpec() bool {
	switch p.lex.tok {
	case token.AUTO, token.REGISTER, token.STATIC, token.EXTERN, token.TYPEDEF,
		token.SELF, token.THIS:
		return true
	}
	return p.startsTypeName()
}

// startsTypeName reports whether the current token can begin a type name.
func (p *parser) startsTypeName() bool {
	switch p.lex.tok {
	case token.TNAME, token.CHAR, token.SHORT, token.INTKW, token.LONG,
		token.FLOAT, token.DOUBLE, token.SIGNED, token.UNSIGNED, token.VOID,
		token.STRINGKW, token.STRUCT, token.UNION, token.ENUM,
		token.CONST, token.VOLATILE, token.RESTRICT, token.USERLAND:
		return true
	}
	return false
}

func (p *parser) parseDeclaration() *ast.Declaration {
	d := &ast.Declaration{Spec: p.parseDeclSpecs(true)}
	p.recordTypes(d.Spec)
	if p.lex.tok != token.SEMI {
		for {
			dd := p.parseDeclarator(declNamed)
			dd.DiagPos = p.lex.end // dt_node_decl runs once yacc sees what follows
			switch {
			case d.Spec.Class == ast.Typedef:
				p.declareType(dd.Name)
				p.recordTypedef(dd.Name, d.Spec, dd.Derived)
				if t, ok := p.intTypeOf(d.Spec); ok && len(dd.Derived) == 0 {
					if p.typedefInts == nil {
						p.typedefInts = make(map[string]ast.IntType)
					}
					p.typedefInts[dd.Name] = t
				}
			case len(dd.Derived) > 0 && isFunc(dd.Derived[0]):
				// A function declaration names no variable.
			default:
				p.declareIdent(dd.Name)
			}
			d.Decls = append(d.Decls, dd)
			if p.lex.tok != token.COMMA {
				break
			}
			p.next()
		}
	}
	p.expectClosing(token.SEMI, scopeClause)
	d.DiagPos = p.prevEnd
	return d
}

// parseDeclSpecs parses declaration specifiers: storage classes (when
// allowed), qualifiers and one base type.
func (p *parser) parseDeclSpecs(classes bool) *ast.DeclSpec {
	s := &ast.DeclSpec{SpecPos: p.lex.pos}
	var words *ast.BasicType
	var ends []token.Pos // where dtrace takes each of words
	for {
		switch p.lex.tok {
		case token.AUTO, token.REGISTER, token.STATIC, token.EXTERN, token.TYPEDEF,
			token.SELF, token.THIS:
			if !classes {
				return p.endSpecs(s, words, ends)
			}
			if s.Class != ast.NoClass {
				p.fail(diag.Errorf(p.lex.pos, diag.D_DECL_CLASS, "only one storage class allowed in a declaration"))
			}
			s.Class = storageClass(p.lex.tok)
		case token.CONST:
			s.Qual |= ast.Const
		case token.RESTRICT:
			s.Qual |= ast.Restrict
		case token.VOLATILE:
			s.Qual |= ast.Volatile
		case token.USERLAND:
			s.Userland = true
		case token.CHAR, token.SHORT, token.INTKW, token.LONG, token.FLOAT,
			token.DOUBLE, token.SIGNED, token.UNSIGNED, token.VOID, token.STRINGKW:
			if s.Type != nil && words == nil {
				p.badCombo(p.lex.end, []string{p.lex.lit})
			}
			if words == nil {
				words = &ast.BasicType{WordPos: p.lex.pos}
				s.Type = words
			}
			words.Words = append(words.Words, p.lex.lit)
			ends = append(ends, p.lex.end)
		case token.STRUCT, token.UNION, token.ENUM:
			// dtrace checks the specifiers when it declares the tag:
			// at the "{" of a definition, or once it sees that none
			// follows the name.
			combo := func(pos token.Pos) {
				if s.Type != nil {
					p.badCombo(pos, wordsOf(words))
				}
			}
			if p.lex.tok == token.ENUM {
				s.Type = p.parseEnum(combo)
			} else {
				s.Type = p.parseStruct(combo)
			}
			continue
		case token.TNAME:
			if s.Type != nil {
				// A type name after the base type is the declarator's
				// name, as id_or_type decides once a type is shifted.
				return p.endSpecs(s, words, ends)
			}
			s.Type = &ast.NamedType{NamePos: p.lex.pos, Name: p.lex.lit}
		case token.IDENT:
			// An unknown name followed by a declarator is taken as a type
			// (see declaratorFollows), but a typedef must name a known one.
			if s.Type != nil || s.Class == ast.Typedef || p.idents[p.lex.lit] || !p.declaratorFollows(p.lex.off) {
				return p.endSpecs(s, words, ends)
			}
			s.Type = &ast.NamedType{NamePos: p.lex.pos, Name: p.lex.lit}
		default:
			return p.endSpecs(s, words, ends)
		}
		// Once the base type is known, a name that follows is the
		// declarator's, whether or not it also names a type (see the
		// TNAME case): the lexer need not look it up.
		p.nameIsDeclarator = s.Type != nil
		p.next()
		p.nameIsDeclarator = false
	}
}

// storageClass returns the storage class keyword t names.
func storageClass(t token.Token) ast.StorageClass {
	switch t {
	case token.AUTO:
		return ast.Auto
	case token.REGISTER:
		return ast.Register
	case token.STATIC:
		return ast.Static
	case token.EXTERN:
		return ast.Extern
	case token.TYPEDEF:
		return ast.Typedef
	case token.SELF:
		return ast.Self
	case token.THIS:
		return ast.This
	}
	return ast.NoClass
}

// badCombo reports a second base type in declaration specifiers, naming
// the type keywords that cannot qualify it as dt_decl.c does.
func (p *parser) badCombo(pos token.Pos, words []string) {
	for _, w := range words {
		switch w {
		case "long":
			p.fail(diag.Errorf(pos, diag.D_DECL_LONGINT, "invalid type declaration: long and long long may only be used with integer or floating-point type"))
		case "signed", "unsigned":
			p.fail(diag.Errorf(pos, diag.D_DECL_SIGNINT, "invalid type declaration: signed and unsigned may only be used with integer type"))
		}
	}
	p.fail(diag.Errorf(pos, diag.D_DECL_COMBO, "invalid type combination"))
}

func wordsOf(b *ast.BasicType) []string {
	if b == nil {
		return nil
	}
	return b.Words
}

// endSpecs checks the combination of type keywords as dt_decl_spec and
// dt_decl_attr do while the specifiers are shifted: after each word, so
// that an error is reported where dtrace takes the word that makes the
// combination invalid (ends[i] for words.Words[i]).
func (p *parser) endSpecs(s *ast.DeclSpec, words *ast.BasicType, ends []token.Pos) *ast.DeclSpec {
	if words == nil {
		return s
	}
	for i := range words.Words {
		if err := comboError(words.Words[:i+1], ends[i]); err != nil {
			p.fail(err)
		}
	}
	return s
}

// comboError returns the error of a combination of type keywords, or
// nil when it is valid so far.
func comboError(words []string, pos token.Pos) *diag.Error {
	var sign, size, base string
	longs := 0
	for _, w := range words {
		switch w {
		case "signed", "unsigned":
			if sign == w {
				return diag.Errorf(pos, diag.D_DECL_COMBO, "the attribute '%s' may only be used at most once in a declaration", w)
			}
			if sign != "" {
				return diag.Errorf(pos, diag.D_DECL_COMBO, "invalid type combination")
			}
			sign = w
		case "short":
			// short with long is refused later, when no type of that
			// name is found, as dt_decl_type does.
			if size == w {
				return diag.Errorf(pos, diag.D_DECL_COMBO, "the attribute '%s' may only be used at most once in a declaration", w)
			}
			size = w
		case "long":
			if longs++; longs > 2 {
				return diag.Errorf(pos, diag.D_DECL_COMBO, "the attribute 'long' may only be used at most twice in a declaration")
			}
			size = w
		default:
			if base != "" {
				return diag.Errorf(pos, diag.D_DECL_COMBO, "invalid type combination")
			}
			base = w
		}
	}
	switch base {
	case "", "int":
	case "char":
		if size != "" {
			return diag.Errorf(pos, diag.D_DECL_CHARATTR, "invalid type declaration: short and long may not be used with char type")
		}
	case "void":
		if sign != "" || size != "" {
			return diag.Errorf(pos, diag.D_DECL_VOIDATTR, "invalid type declaration: attributes may not be used with void type")
		}
	case "double":
		if sign != "" || size == "short" || longs > 1 {
			return diag.Errorf(pos, diag.D_DECL_COMBO, "invalid type combination")
		}
	default:
		if sign != "" || size != "" {
			return diag.Errorf(pos, diag.D_DECL_SIGNINT, "invalid type declaration: signed and unsigned may only be used with integer type")
		}
	}
	return nil
}

// parseStruct parses a struct or union reference or definition; tagged
// is called where dtrace declares it.
func (p *parser) parseStruct(tagged func(token.Pos)) *ast.StructType {
	t := &ast.StructType{Keyword: p.lex.pos, Union: p.lex.tok == token.UNION}
	p.next()
	if p.lex.tok == token.IDENT || p.lex.tok == token.TNAME {
		t.Name = p.lex.lit
		p.next()
	}
	if p.lex.tok != token.LBRACE {
		if t.Name == "" {
			p.syntaxError()
		}
		// yacc ends a reference once it sees that no "{" follows.
		t.DiagPos = p.lex.end
		tagged(t.DiagPos)
		return t
	}
	// dt_decl_sou runs once the "{" is shifted.
	t.DiagPos = p.lex.end
	tagged(t.DiagPos)
	if strings.IndexByte(t.Name, '`') >= 0 {
		p.scopedDefinition()
	}
	p.nest()
	defer func() { p.depth-- }()
	if t.Name != "" {
		// The tag is declared at its '{', as dt_decl_sou declares it:
		// a definition of the same tag inside it is a redefinition,
		// not a struct that contains itself.
		key := structKey(t)
		if p.defining[key] {
			p.fail(diag.Errorf(t.Pos(), diag.D_DECL_TYPERED, "type redeclared: %s", key))
		}
		if p.defining == nil {
			p.defining = make(map[string]bool)
		}
		p.defining[key] = true
		defer delete(p.defining, key)
	}
	if t.Name != "" && p.cfg.DefineTag != nil {
		if err := p.cfg.DefineTag(t); err != nil {
			de, ok := err.(*diag.Error)
			if !ok {
				de = diag.Errorf(t.Pos(), diag.D_UNKNOWN, "%v", err)
			}
			p.fail(de)
		}
	}
	p.next()
	t.Members = []*ast.Member{}
	if p.lex.tok == token.RBRACE {
		p.syntaxError() // a definition needs a member
	}
	for p.lex.tok != token.RBRACE {
		m := &ast.Member{Spec: p.parseDeclSpecs(false)}
		if m.Spec.Type == nil {
			p.syntaxError()
		}
		for {
			var d *ast.Declarator
			if p.lex.tok == token.COLON {
				d = &ast.Declarator{NamePos: p.lex.pos}
			} else {
				d = p.parseDeclarator(declNamed)
			}
			if p.lex.tok == token.COLON {
				p.next()
				d.BitWidth = p.parseCond()
			}
			d.DiagPos = p.lex.end // where dt_decl_member runs
			m.Decls = append(m.Decls, d)
			if p.lex.tok != token.COMMA {
				break
			}
			p.next()
		}
		p.expect(token.SEMI)
		t.Members = append(t.Members, m)
	}
	p.next()
	return t
}

// scopedDefinition refuses the definition of a scoped name (struct
// mod`name { … }), which refers to a type and cannot define one, with
// a syntax error near its "{". dtrace's grammar takes the name, so an
// empty member list is first a syntax error near its "}".
func (p *parser) scopedDefinition() {
	lbrace := diag.Errorf(p.lex.end, diag.D_SYNTAX, "syntax error %s", p.near())
	p.next()
	if p.lex.tok == token.RBRACE {
		p.syntaxError()
	}
	p.fail(lbrace)
}

// parseEnum parses an enum reference or definition; tagged is called
// where dtrace declares it.
func (p *parser) parseEnum(tagged func(token.Pos)) *ast.EnumType {
	t := &ast.EnumType{Keyword: p.lex.pos}
	p.next()
	if p.lex.tok == token.IDENT || p.lex.tok == token.TNAME {
		t.Name = p.lex.lit
		p.next()
	}
	if p.lex.tok != token.LBRACE {
		if t.Name == "" {
			p.syntaxError()
		}
		t.DiagPos = p.lex.end
		tagged(t.DiagPos)
		return t
	}
	t.DiagPos = p.lex.end // dt_decl_enum runs once the "{" is shifted
	tagged(t.DiagPos)
	if strings.IndexByte(t.Name, '`') >= 0 {
		p.scopedDefinition()
	}
	p.next()
	t.Enumerators = []*ast.Enumerator{}
	next := uint64(0)
	for {
		if p.lex.tok != token.IDENT {
			p.syntaxError()
		}
		e := &ast.Enumerator{Name: &ast.Ident{NamePos: p.lex.pos, Name: p.lex.lit}}
		p.next()
		if p.lex.tok == token.ASGN {
			p.next()
			e.Value = p.parseCond()
			c, ok := e.Value.(*ast.IntLit)
			if !ok {
				p.fail(diag.Errorf(p.lex.end, diag.D_DECL_ENCONST, "enumerator '%s' must be assigned to an integral constant expression", e.Name.Name))
			}
			next = c.Value
		}
		// dt_decl_enumerator runs once yacc sees what follows.
		e.DiagPos = p.lex.end
		// An enumerator is an int constant of its enum wherever it is
		// named, as dtrace's enumerator identifiers are.
		p.declareIdent(e.Name.Name)
		named := ""
		if t.Name != "" {
			named = "enum " + t.Name
		}
		p.inlineInts[e.Name.Name] = &ast.IntLit{Value: uint64(int64(int32(next))), Type: ast.Int, Named: named}
		next++
		t.Enumerators = append(t.Enumerators, e)
		if p.lex.tok != token.COMMA {
			break
		}
		p.next()
	}
	p.expect(token.RBRACE)
	return t
}

// declKind says whether a declarator must, must not or may name
// something.
type declKind uint8

const (
	declNamed    declKind = iota // declarations
	declAbstract                 // type names
	declEither                   // parameters
)

// parseDeclarator parses a C declarator. Derivations are collected from
// the name outwards: the suffixes of the direct declarator, then the
// pointers that precede it, nearest first. Each derivation is a level of
// nesting: the type it makes nests as deeply.
func (p *parser) parseDeclarator(kind declKind) *ast.Declarator {
	p.nest()
	defer func() { p.depth-- }()
	var ptrs []ast.Derivation
	for p.lex.tok == token.MUL {
		p.next()
		ptr := &ast.Pointer{}
		for {
			switch p.lex.tok {
			case token.CONST:
				ptr.Qual |= ast.Const
			case token.RESTRICT:
				ptr.Qual |= ast.Restrict
			case token.VOLATILE:
				ptr.Qual |= ast.Volatile
			default:
				goto done
			}
			p.next()
		}
	done:
		ptrs = append(ptrs, ptr)
		if p.depth+len(ptrs) > MaxNesting {
			p.tooDeep()
		}
	}
	d := &ast.Declarator{NamePos: p.lex.pos}
	var suffixes []ast.Derivation
	switch {
	case kind != declAbstract && (p.lex.tok == token.IDENT || p.lex.tok == token.TNAME):
		d.Name = p.lex.lit
		p.next()
	case p.lex.tok == token.LPAREN:
		p.next()
		nested := kind == declNamed
		switch p.lex.tok {
		case token.MUL, token.LPAREN, token.LBRACK:
			nested = true
		case token.IDENT:
			nested = nested || kind == declEither
		}
		if nested {
			inner := p.parseDeclarator(kind)
			p.expect(token.RPAREN)
			d.NamePos, d.Name = inner.NamePos, inner.Name
			suffixes = append(suffixes, inner.Derived...)
		} else {
			suffixes = append(suffixes, p.parseParamsRest())
		}
	case kind == declNamed:
		p.syntaxError()
	}
	for {
		if p.depth+len(ptrs)+len(suffixes) > MaxNesting {
			p.tooDeep()
		}
		switch p.lex.tok {
		case token.LBRACK:
			suffixes = append(suffixes, p.parseArray())
			continue
		case token.LPAREN:
			p.next()
			suffixes = append(suffixes, p.parseParamsRest())
			continue
		}
		break
	}
	for i := len(ptrs) - 1; i >= 0; i-- {
		suffixes = append(suffixes, ptrs[i])
	}
	d.Derived = suffixes
	return d
}

// parseArray parses [N], [] or [key types] of an array declarator.
func (p *parser) parseArray() *ast.Array {
	p.next()
	a := &ast.Array{}
	switch {
	case p.lex.tok == token.RBRACK:
	case p.startsDeclSpec() || p.lex.tok == token.ELLIPSIS:
		// A key list is a parameter list, as in dtrace's grammar, so
		// it may end in "..."; the checker refuses that.
		for {
			if p.lex.tok == token.ELLIPSIS {
				a.Variadic = true
				p.next()
				break
			}
			a.Keys = append(a.Keys, p.parseParam())
			if p.lex.tok != token.COMMA {
				break
			}
			p.next()
		}
	default:
		a.Len = p.parseCond()
	}
	p.expect(token.RBRACK)
	a.DiagPos = p.prevEnd
	return a
}

// parseParamsRest parses a parameter list whose "(" is consumed.
func (p *parser) parseParamsRest() *ast.Func {
	f := &ast.Func{}
	if p.lex.tok == token.RPAREN {
		p.next()
		return f
	}
	for {
		if p.lex.tok == token.ELLIPSIS {
			f.Variadic = true
			p.next()
			break
		}
		f.Params = append(f.Params, p.parseParam())
		if p.lex.tok != token.COMMA {
			break
		}
		p.next()
	}
	p.expect(token.RPAREN)
	return f
}

// parseParam parses a parameter or key type: specifiers, which may start
// with a C storage class but not self or this, and an optional
// declarator.
func (p *parser) parseParam() *ast.Param {
	if !p.startsDeclSpec() || p.lex.tok == token.SELF || p.lex.tok == token.THIS {
		p.syntaxError()
	}
	prm := &ast.Param{Spec: p.parseDeclSpecs(true), Decl: p.parseDeclarator(declEither)}
	prm.DiagPos = p.lex.end
	return prm
}

// parseTypeName parses a type name: specifiers and an abstract
// declarator.
func (p *parser) parseTypeName() *ast.TypeName {
	return p.parseTypeNameIn(false)
}

// parseTypeNameIn parses a type name where only a type can stand
// (xlate<T>, offsetof(T, m), translators): there an unknown name is
// taken as a type name.
func (p *parser) parseTypeNameIn(typeOnly bool) *ast.TypeName {
	if typeOnly && p.lex.tok == token.IDENT && !p.idents[p.lex.lit] {
		// With the type checker's types at hand the parser knows every
		// type, and a name that is none is a syntax error there, as in
		// dtrace's grammar: offsetof(nosuch_t, m), xlate<nosuch_t>.
		if p.cfg.Types != nil && !p.isType(p.lex.lit) {
			p.syntaxError()
		}
		p.lex.tok = token.TNAME
	}
	s := p.parseDeclSpecs(false)
	if s.Type == nil && s.Qual == 0 && !s.Userland {
		p.syntaxError()
	}
	return &ast.TypeName{Spec: s, Decl: p.parseDeclarator(declAbstract)}
}

// ----------------------------------------------------------------------------
// Inline, translator and provider definitions

func (p *parser) parseInline() *ast.InlineDecl {
	d := &ast.InlineDecl{Inline: p.lex.pos}
	p.next()
	d.Spec = p.parseDeclSpecs(false)
	d.Decl = p.parseDeclarator(declNamed)
	p.declareIdent(d.Decl.Name)
	p.expect(token.ASGN)
	d.Value = p.parseAssign()
	if c, ok := d.Value.(*ast.IntLit); ok && len(d.Decl.Derived) == 0 {
		if t, ok := p.intTypeOf(d.Spec); ok {
			p.inlineInts[d.Decl.Name] = &ast.IntLit{Value: constant.Convert(c, t), Type: t, Named: typedefName(d.Spec)}
		}
	}
	p.expectClosing(token.SEMI, scopeClause)
	d.DiagPos = p.prevEnd
	return d
}

func (p *parser) parseTranslator() *ast.Translator {
	x := &ast.Translator{Xlator: p.lex.pos}
	p.next()
	x.To = p.parseTypeNameIn(true)
	p.expect(token.LT)
	x.From = p.parseTypeNameIn(true)
	if p.lex.tok != token.IDENT && p.lex.tok != token.TNAME {
		p.syntaxError()
	}
	x.Arg = &ast.Ident{NamePos: p.lex.pos, Name: p.lex.lit}
	p.next()
	p.expect(token.GT)
	p.expect(token.LBRACE)
	for p.lex.tok != token.RBRACE {
		m := &ast.XlateMember{Name: p.parseMemberName()}
		p.expect(token.ASGN)
		m.Value = p.parseAssign()
		p.expect(token.SEMI)
		x.Members = append(x.Members, m)
	}
	p.next()
	p.expectClosing(token.SEMI, scopeClause)
	x.DiagPos = p.prevEnd
	return x
}

func (p *parser) parseProvider() *ast.ProviderDecl {
	d := &ast.ProviderDecl{Provider: p.lex.pos}
	p.next()
	if p.lex.tok != token.IDENT && p.lex.tok != token.TNAME {
		p.syntaxError()
	}
	d.Name = &ast.Ident{NamePos: p.lex.pos, Name: p.lex.lit}
	p.next()
	p.expect(token.LBRACE)
	for p.lex.tok != token.RBRACE {
		p.expect(token.PROBE)
		if p.lex.tok != token.IDENT && p.lex.tok != token.TNAME {
			p.syntaxError()
		}
		pr := &ast.ProviderProbe{Name: &ast.Ident{NamePos: p.lex.pos, Name: p.lex.lit}}
		p.next()
		p.expect(token.LPAREN)
		in := p.parseParamsRest()
		if in.Variadic {
			p.fail(diag.Errorf(pr.Name.NamePos, diag.D_DECL_PROTO_VARARGS, "probe input prototype may not use a variable-length argument list"))
		}
		pr.Params = in.Params
		if p.lex.tok == token.COLON {
			p.next()
			p.expect(token.LPAREN)
			out := p.parseParamsRest()
			if out.Variadic {
				p.fail(diag.Errorf(pr.Name.NamePos, diag.D_DECL_PROTO_VARARGS, "probe output prototype may not use a variable-length argument list"))
			}
			pr.XParams = out.Params
			if pr.XParams == nil {
				pr.XParams = []*ast.Param{}
			}
		}
		p.expect(token.SEMI)
		d.Probes = append(d.Probes, pr)
	}
	p.next()
	p.expectClosing(token.SEMI, scopeClause)
	return d
}

func isFunc(d ast.Derivation) bool {
	_, ok := d.(*ast.Func)
	return ok
}
