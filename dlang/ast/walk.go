package ast

// Inspect traverses the tree rooted at n in depth-first order, calling f
// for each node; when f returns false, the node's children are skipped.
// Type specifiers, declarators and type names are visited too, so that
// a pass can find every type a program names.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch n := n.(type) {
	case *UnaryExpr:
		Inspect(n.X, f)
	case *BinaryExpr:
		Inspect(n.X, f)
		Inspect(n.Y, f)
	case *CondExpr:
		Inspect(n.Cond, f)
		Inspect(n.X, f)
		Inspect(n.Y, f)
	case *IndexExpr:
		Inspect(n.X, f)
		inspectExprs(n.Index, f)
	case *SelectorExpr:
		Inspect(n.X, f)
		Inspect(n.Sel, f)
	case *CallExpr:
		Inspect(n.Fun, f)
		inspectExprs(n.Args, f)
	case *CastExpr:
		inspectTypeName(n.Type, f)
		Inspect(n.X, f)
	case *SizeofExpr:
		if n.Type != nil {
			inspectTypeName(n.Type, f)
		} else {
			Inspect(n.X, f)
		}
	case *OffsetofExpr:
		inspectTypeName(n.Type, f)
		Inspect(n.Member, f)
	case *XlateExpr:
		inspectTypeName(n.Type, f)
		Inspect(n.X, f)
	case *ExprStmt:
		Inspect(n.X, f)
	case *IfStmt:
		Inspect(n.Cond, f)
		inspectBlock(n.Then, f)
		inspectBlock(n.Else, f)
	case *TypeName:
		inspectSpec(n.Spec, f)
		inspectDeclarator(n.Decl, f)
	case *StructType:
		for _, m := range n.Members {
			inspectSpec(m.Spec, f)
			for _, d := range m.Decls {
				inspectDeclarator(d, f)
			}
		}
	case *EnumType:
		for _, e := range n.Enumerators {
			Inspect(e.Name, f)
			if e.Value != nil {
				Inspect(e.Value, f)
			}
		}
	case *Clause:
		if n.Pred != nil {
			Inspect(n.Pred, f)
		}
		for _, s := range n.Body {
			Inspect(s, f)
		}
	case *Declaration:
		inspectSpec(n.Spec, f)
		for _, d := range n.Decls {
			inspectDeclarator(d, f)
		}
	case *InlineDecl:
		inspectSpec(n.Spec, f)
		inspectDeclarator(n.Decl, f)
		Inspect(n.Value, f)
	case *Translator:
		inspectTypeName(n.To, f)
		inspectTypeName(n.From, f)
		Inspect(n.Arg, f)
		for _, m := range n.Members {
			Inspect(m.Name, f)
			Inspect(m.Value, f)
		}
	case *ProviderDecl:
		Inspect(n.Name, f)
		for _, p := range n.Probes {
			Inspect(p.Name, f)
			inspectParams(p.Params, f)
			inspectParams(p.XParams, f)
		}
	}
}

func inspectExprs(list []Expr, f func(Node) bool) {
	for _, x := range list {
		Inspect(x, f)
	}
}

func inspectBlock(b *Block, f func(Node) bool) {
	if b == nil {
		return
	}
	for _, s := range b.List {
		Inspect(s, f)
	}
}

func inspectTypeName(t *TypeName, f func(Node) bool) {
	if t != nil {
		Inspect(t, f)
	}
}

func inspectSpec(s *DeclSpec, f func(Node) bool) {
	if s != nil && s.Type != nil {
		Inspect(s.Type, f)
	}
}

func inspectDeclarator(d *Declarator, f func(Node) bool) {
	if d == nil {
		return
	}
	for _, dv := range d.Derived {
		switch dv := dv.(type) {
		case *Array:
			if dv.Len != nil {
				Inspect(dv.Len, f)
			}
			inspectParams(dv.Keys, f)
		case *Func:
			inspectParams(dv.Params, f)
		}
	}
	if d.BitWidth != nil {
		Inspect(d.BitWidth, f)
	}
}

func inspectParams(ps []*Param, f func(Node) bool) {
	for _, p := range ps {
		inspectSpec(p.Spec, f)
		inspectDeclarator(p.Decl, f)
	}
}
