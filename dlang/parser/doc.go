// Package parser implements a parser for D programs.
//
// ParseFile turns D source text into an *ast.Program. The lexer and the
// recursive-descent parser are written by hand so that they can follow
// libdtrace's dt_lex.l and dt_grammar.y where those depend on feedback:
//
//   - The lexer has two scopes, as dt_lex.l's S2 and S0 states: the outer
//     scope, where a word such as syscall::read:entry is one probe
//     specifier, and the expression scope inside predicates, actions and
//     declarations. The parser selects the scope before it asks for the
//     token that follows a construct.
//   - A name is a type name (TNAME) when the script declared it with
//     typedef, when it is one of D's built-in typedefs, or when
//     Config.Types says so; the type checker fills Config.Types with
//     kernel types. As in dtrace, a type name followed by "[", "=",
//     "++" or "--" in an expression is taken as a variable.
//   - A "/" followed by ";", "{", "/" or the end of input ends a
//     predicate; any other "/" divides.
//   - Control lines (#pragma D …, #line, cpp line markers, #error) are
//     executed by the lexer when met, and recorded in Program.Pragmas.
//   - Macro arguments ($1, $$1) and macro variables ($pid, $target) are
//     substituted as they are scanned, also inside probe specifiers.
//   - Integer constants are typed as dt_node_int types them and folded
//     as dt_node_op1 and dt_node_op2 fold them (package constant).
//   - Errors are reported on the line dtrace reports them: the line its
//     lexer has reached, which is after the token at fault and, after
//     "/" and type names, after the blanks dt_lex.l reads past. Nodes
//     record that position as dtrace's yacc parser would have it when it
//     builds them (ast.DiagPos): after the node's last token, or after
//     the next token when yacc needs that token to end the node. The
//     type checker reports its errors there.
//
// Errors stop the parse at the first one, as in dtrace, and come back
// as a *diag.Error with dtrace's tag and message; no input makes the
// parser panic.
//
// Nesting is bounded by MaxNesting, 10000 levels: the stack byacc gives
// dtrace's yacc grammar (YYMAXDEPTH in its skeleton), beyond which dtrace
// fails with "yacc stack overflow". Each parenthesis, cast, unary or
// conditional operator, assignment, index or call bracket, if statement,
// struct or union body, declarator and derivation (*, [n], (params))
// is a level, and so is each level of an expression tree's height, so
// that a left-associative chain (a + a + … + a), which yacc reduces as it
// goes but which every later pass recurses over, is bounded as well. The
// limit is checked before the recursion it guards, so input of any depth
// ends in the D_SYNTAX error
//
//	yacc stack overflow near "(": nesting exceeds 10000 levels
//
// at once, and no pass after the parser recurses deeper than the tree.
package parser
