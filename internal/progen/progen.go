package progen

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Func is one of a program's inline functions.
type Func struct {
	Name string
	// Always says it is declared always_inline as well as static
	// inline.
	Always bool
	// Pointer says the program also calls it through a function
	// pointer, which keeps an out-of-line copy of it.
	Pointer bool
	// Calls are the inline functions its body calls.
	Calls []string
}

// Program is a generated C program.
type Program struct {
	Seed uint64
	// Source is the program's C source, one file.
	Source string
	// Funcs are its inline functions, in the order they are defined.
	Funcs []Func
	// Args are the arguments to run it with.
	Args []string
}

// Generate returns the program of seed.
func Generate(seed uint64) *Program {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	p := &Program{Seed: seed}
	nf := 3 + g.r.IntN(4)
	g.weight = make([]int, nf)
	for i := range nf {
		f := Func{Name: fmt.Sprintf("f%d", i), Always: g.r.IntN(3) == 0, Pointer: g.r.IntN(4) == 0}
		g.funcs = append(g.funcs, f)
	}
	fmt.Fprintf(&g.b, "/* progen seed %d */\n#include <stdio.h>\n#include <stdlib.h>\n\n", seed)
	g.b.WriteString("static unsigned tab[16];\n")
	for _, f := range g.funcs {
		fmt.Fprintf(&g.b, "unsigned long cnt_%s;\n", f.Name)
	}
	for i := range g.funcs {
		g.b.WriteString("\n")
		g.inlineFunc(i)
	}
	g.callers()
	p.Source = g.b.String()
	p.Funcs = g.funcs
	p.Args = []string{strconv.Itoa(32 + g.r.IntN(224)), strconv.Itoa(g.r.IntN(1000))}
	return p
}

// Counts reads the counters a program printed, by function name; other
// lines are left alone, so out may hold a tracer's output as well.
func Counts(out []byte) (map[string]uint64, error) {
	counts := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "cnt" {
			continue
		}
		n, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("count of %s: %w", f[1], err)
		}
		if _, ok := counts[f[1]]; ok {
			return nil, fmt.Errorf("two counts of %s", f[1])
		}
		counts[f[1]] = n
	}
	return counts, sc.Err()
}

// maxWeight bounds the calls of inline functions one call of an inline
// function makes, itself included, so that the callers' loops bound the
// program's calls.
const maxWeight = 4

// site is a call of funcs[fn], through its pointer if ptr.
type site struct {
	fn  int
	ptr bool
}

type gen struct {
	r     *rand.Rand
	b     strings.Builder
	funcs []Func
	// weight[i] is the most calls of inline functions one call of
	// funcs[i] makes, itself included.
	weight []int
	// todo are the calls no caller makes yet: each function directly,
	// and those with Pointer through their pointer.
	todo []site
}

// konst returns an unsigned constant below n.
func (g *gen) konst(n int) string {
	return fmt.Sprintf("%du", g.r.IntN(n))
}

func (g *gen) pick(vars []string) string {
	return vars[g.r.IntN(len(vars))]
}

// two returns two different variables of vars.
func (g *gen) two(vars []string) (string, string) {
	i := g.r.IntN(len(vars))
	j := (i + 1 + g.r.IntN(len(vars)-1)) % len(vars)
	return vars[i], vars[j]
}

// expr returns an unsigned expression of vars.
func (g *gen) expr(vars []string) string {
	a, b := g.pick(vars), g.pick(vars)
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("%s * %s + %s", a, g.konst(97), b)
	case 1:
		return fmt.Sprintf("(%s ^ (%s << %d)) + %s", a, b, 1+g.r.IntN(5), g.konst(1000))
	case 2:
		return fmt.Sprintf("tab[(%s + %s) & 15u]", a, b)
	case 3:
		return fmt.Sprintf("(%s >> %d) | %s", a, 1+g.r.IntN(4), g.konst(64))
	case 4:
		return fmt.Sprintf("%s - %s * %s", a, b, g.konst(13))
	default:
		return fmt.Sprintf("%s %% %du + %s", a, 2+g.r.IntN(9), b)
	}
}

// cond returns a condition on vars.
func (g *gen) cond(vars []string) string {
	a, b := g.two(vars)
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("(%s & 7u) == %s", a, g.konst(8))
	case 1:
		return fmt.Sprintf("%s > %s", a, b)
	case 2:
		return fmt.Sprintf("((%s ^ %s) & %du) != 0u", a, b, 1<<g.r.IntN(3))
	default:
		return fmt.Sprintf("(tab[%s & 15u] & 3u) == %s", a, g.konst(4))
	}
}

// inlineFunc writes funcs[i], which may call the functions before it.
func (g *gen) inlineFunc(i int) {
	f := &g.funcs[i]
	attr := "static inline"
	if f.Always {
		attr += " __attribute__((always_inline))"
	}
	fmt.Fprintf(&g.b, "%s unsigned %s(unsigned a, unsigned b)\n{\n\tcnt_%s++;\n", attr, f.Name, f.Name)
	vars := []string{"a", "b"}
	w := 1
	called := false
	for range 1 + g.r.IntN(4) {
		switch g.r.IntN(6) {
		case 0:
			fmt.Fprintf(&g.b, "\tif (%s)\n\t\treturn %s;\n", g.cond(vars), g.expr(vars))
		case 1:
			fmt.Fprintf(&g.b, "\tif (%s)\n\t\ta = %s;\n\telse\n\t\tb = %s;\n", g.cond(vars), g.expr(vars), g.expr(vars))
		case 2:
			if g.r.IntN(2) == 0 {
				fmt.Fprintf(&g.b, "\tfor (unsigned i = 0; i < (b & 3u); i++)\n\t\ta += tab[(a + i) & 15u] ^ i;\n")
			} else {
				// A return from inside the loop.
				fmt.Fprintf(&g.b, "\tfor (unsigned i = 0; i < (b & 7u); i++)\n\t\tif ((tab[(a + i) & 15u] & 7u) == %s)\n\t\t\treturn i + b;\n", g.konst(8))
			}
		case 3:
			fmt.Fprintf(&g.b, "\tswitch (a & 3u) {\n\tcase 0:\n\t\tb += %s;\n\t\tbreak;\n\tcase 1:\n\t\treturn %s;\n\tdefault:\n\t\ta ^= b;\n\t\tbreak;\n\t}\n", g.konst(100), g.expr(vars))
		default:
			if called || i == 0 {
				fmt.Fprintf(&g.b, "\tb ^= %s;\n", g.expr(vars))
				continue
			}
			j := g.r.IntN(i)
			if g.weight[j] == 1 && g.r.IntN(2) == 0 {
				// Up to two calls, in a loop of its own.
				fmt.Fprintf(&g.b, "\tfor (unsigned k = 0; k < (b & 1u) + 1u; k++)\n\t\ta ^= %s(a + k, b);\n", g.funcs[j].Name)
				w += 2
			} else if w+g.weight[j] <= maxWeight {
				fmt.Fprintf(&g.b, "\ta += %s(b, a ^ %s);\n", g.funcs[j].Name, g.konst(256))
				w += g.weight[j]
			} else {
				continue
			}
			f.Calls = append(f.Calls, g.funcs[j].Name)
			called = true
		}
	}
	if j := g.r.IntN(i + 1); j < i && !called && w+g.weight[j] <= maxWeight && g.r.IntN(3) == 0 {
		// A tail call: the two copies end together.
		fmt.Fprintf(&g.b, "\treturn %s(a ^ %s, b);\n}\n", g.funcs[j].Name, g.konst(256))
		f.Calls = append(f.Calls, g.funcs[j].Name)
		w += g.weight[j]
	} else {
		fmt.Fprintf(&g.b, "\treturn (%s) + (a ^ b);\n}\n", g.expr(vars))
	}
	if f.Pointer {
		fmt.Fprintf(&g.b, "static unsigned (*volatile fp_%s)(unsigned, unsigned) = %s;\n", f.Name, f.Name)
	}
	g.weight[i] = w
}

// call returns a statement that calls inline functions with arguments
// of vars and adds to acc: first those of todo.
func (g *gen) call(vars []string) string {
	fn := func() string {
		var s site
		if len(g.todo) > 0 {
			s, g.todo = g.todo[0], g.todo[1:]
		} else {
			s.fn = g.r.IntN(len(g.funcs))
			s.ptr = g.funcs[s.fn].Pointer && g.r.IntN(3) == 0
		}
		if s.ptr {
			return "fp_" + g.funcs[s.fn].Name
		}
		return g.funcs[s.fn].Name
	}
	args := func() string { return g.expr(vars) + ", " + g.pick(vars) }
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("if (%s(%s) & 1u)\n\tacc += 3u;", fn(), args())
	case 4:
		// The value unused: what is left of the body may be the
		// counter's increment alone, which the compiler may merge.
		return fmt.Sprintf("%s(%s);", fn(), args())
	case 1:
		f := fn()
		return fmt.Sprintf("acc ^= %s(%s(%s), %s);", f, fn(), args(), g.pick(vars))
	case 2:
		return fmt.Sprintf("acc += %s(%s) * %s(%s);", fn(), args(), fn(), args())
	default:
		return fmt.Sprintf("acc += %s(%s);", fn(), args())
	}
}

// calls returns one to two call statements, indented by tabs.
func (g *gen) calls(vars []string, tabs int) string {
	var s []string
	for range 1 + g.r.IntN(2) {
		s = append(s, g.call(vars))
	}
	ind := strings.Repeat("\t", tabs)
	return ind + strings.ReplaceAll(strings.Join(s, "\n"), "\n", "\n"+ind) + "\n"
}

// shapes are the callers' forms: each writes the body of a caller of n
// and m that sums into acc, and says whether the caller recurses.
var shapes = []func(g *gen, name string) (body string, recurses bool){
	func(g *gen, _ string) (string, bool) { // counted loop
		v := []string{"i", "m", "(unsigned)acc"}
		return "\tfor (unsigned i = 0; i < (n & 63u); i++) {\n" + g.calls(v, 2) + "\t}\n", false
	},
	func(g *gen, _ string) (string, bool) { // while loop, down
		v := []string{"i", "m", "(unsigned)acc"}
		return "\tunsigned i = n & 63u;\n\twhile (i != 0u) {\n" + g.calls(v, 2) + "\t\ti--;\n\t}\n", false
	},
	func(g *gen, _ string) (string, bool) { // while loop, uneven steps
		v := []string{"i", "m", "(unsigned)acc"}
		return "\tunsigned i = 0;\n\twhile (i < (n & 63u)) {\n" + g.calls(v, 2) + "\t\ti += 1u + ((unsigned)acc & 1u);\n\t}\n", false
	},
	func(g *gen, _ string) (string, bool) { // do-while loop
		v := []string{"i", "n", "(unsigned)acc"}
		return "\tunsigned i = 0;\n\tdo {\n" + g.calls(v, 2) + "\t\ti++;\n\t} while (i < (m & 31u));\n", false
	},
	func(g *gen, _ string) (string, bool) { // nested loops
		v := []string{"i", "j", "m", "(unsigned)acc"}
		inner := "\t\tfor (unsigned j = 0; j <= (m & 7u); j++) {\n"
		if g.r.IntN(2) == 0 {
			inner = "\t\tfor (unsigned j = 0; j < (i & 7u); j++) {\n"
		}
		s := "\tfor (unsigned i = 0; i < (n & 15u); i++) {\n"
		if g.r.IntN(2) == 0 {
			s += g.calls(v[:1], 2)
		}
		return s + inner + g.calls(v, 3) + "\t\t}\n\t}\n", false
	},
	func(g *gen, _ string) (string, bool) { // break and continue
		v := []string{"i", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tfor (unsigned i = 0; i < (n & 63u); i++) {\n\t\tif (((i ^ m) & 7u) == %s)\n\t\t\tcontinue;\n%s\t\tif ((acc & 31u) == %s)\n\t\t\tbreak;\n%s\t}\n",
			g.konst(8), g.calls(v, 2), g.konst(32), g.calls(v, 2)), false
	},
	func(g *gen, _ string) (string, bool) { // a return from inside the loop
		v := []string{"i", "m", "(unsigned)acc"}
		ret := "acc"
		if g.r.IntN(2) == 0 {
			ret = g.funcs[g.r.IntN(len(g.funcs))].Name + "(i, m)"
		}
		return fmt.Sprintf("\tfor (unsigned i = 0; i < (n & 63u); i++) {\n%s\t\tif ((acc & 63u) == %s)\n\t\t\treturn %s;\n\t}\n", g.calls(v, 2), g.konst(64), ret), false
	},
	func(g *gen, _ string) (string, bool) { // a loop made of goto
		v := []string{"i", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tunsigned i = 0;\nagain:\n%s\tif (++i < (n & 31u))\n\t\tgoto again;\n", g.calls(v, 1)), false
	},
	func(g *gen, _ string) (string, bool) { // a call in the loop's condition
		v := []string{"i", "m"}
		return fmt.Sprintf("\tunsigned i = 0;\n\twhile (i < (n & 63u) && (%s(%s, m) & 7u) != %s) {\n\t\tacc += i;\n%s\t\ti++;\n\t}\n",
			g.funcs[g.r.IntN(len(g.funcs))].Name, g.expr(v), g.konst(8), g.calls(v, 2)), false
	},
	func(g *gen, _ string) (string, bool) { // if/else
		v := []string{"n", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tif (%s) {\n%s\t} else {\n%s\t}\n", g.cond(v[:2]), g.calls(v, 2), g.calls(v, 2)), false
	},
	func(g *gen, _ string) (string, bool) { // if/else in a loop
		v := []string{"i", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tfor (unsigned i = 0; i < (n & 31u); i++) {\n\t\tif (%s) {\n%s\t\t} else {\n%s\t\t}\n\t}\n",
			g.cond(v), g.calls(v, 3), g.calls(v, 3)), false
	},
	func(g *gen, _ string) (string, bool) { // switch in a loop
		v := []string{"i", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tfor (unsigned i = 0; i < (n & 31u); i++) {\n\t\tswitch ((i ^ m) %% 5u) {\n\t\tcase 0:\n%s\t\t\tbreak;\n\t\tcase 1:\n\t\tcase 2:\n%s\t\t\tbreak;\n\t\tcase 3:\n\t\t\tacc += i;\n\t\t\tbreak;\n\t\tdefault:\n%s\t\t\tbreak;\n\t\t}\n\t}\n",
			g.calls(v, 3), g.calls(v, 3), g.calls(v, 3)), false
	},
	func(g *gen, name string) (string, bool) { // bounded recursion
		v := []string{"n", "m", "(unsigned)acc"}
		return fmt.Sprintf("\tif (n == 0u)\n\t\treturn m;\n%s\tacc += %s(n - 1u, m ^ n);\n%s", g.calls(v, 1), name, g.calls(v, 1)), true
	},
	func(g *gen, _ string) (string, bool) { // straight line
		v := []string{"n", "m", "(unsigned)acc"}
		return g.calls(v, 1) + g.calls(v, 1), false
	},
}

// callers writes the callers of the inline functions and main.
func (g *gen) callers() {
	for i, f := range g.funcs {
		g.todo = append(g.todo, site{i, false})
		if f.Pointer {
			g.todo = append(g.todo, site{i, true})
		}
	}
	g.r.Shuffle(len(g.todo), func(i, j int) { g.todo[i], g.todo[j] = g.todo[j], g.todo[i] })
	order := g.r.Perm(len(shapes))
	type caller struct {
		name     string
		recurses bool
	}
	var cs []caller
	n := 5 + g.r.IntN(4)
	for k := 0; k < n || len(g.todo) > 0; k++ {
		name := fmt.Sprintf("c%d", k)
		body, rec := shapes[order[k%len(order)]](g, name)
		attr := "static"
		if g.r.IntN(2) == 0 {
			attr = "__attribute__((noinline)) static"
		}
		ret := "acc + (n ^ m)"
		if g.r.IntN(4) == 0 {
			// The caller ends in a copy: its return is the copy's.
			ret = fmt.Sprintf("%s(n ^ (unsigned)acc, m)", g.funcs[g.r.IntN(len(g.funcs))].Name)
		}
		fmt.Fprintf(&g.b, "\n%s unsigned long %s(unsigned n, unsigned m)\n{\n\tunsigned long acc = 0;\n%s\treturn %s;\n}\n", attr, name, body, ret)
		cs = append(cs, caller{name, rec})
	}
	g.b.WriteString("\nint main(int argc, char **argv)\n{\n")
	g.b.WriteString("\tunsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100u;\n\tunsigned m = argc > 2 ? (unsigned)atoi(argv[2]) : 7u;\n\tunsigned long acc = 0;\n\n")
	g.b.WriteString("\tfor (unsigned k = 0; k < 16u; k++)\n\t\ttab[k] = (n * (k + 1u)) ^ m;\n")
	for _, c := range cs {
		if c.recurses {
			fmt.Fprintf(&g.b, "\tacc += %s(n & 15u, m);\n", c.name)
		} else {
			fmt.Fprintf(&g.b, "\tacc += %s(n, m);\n", c.name)
		}
	}
	g.b.WriteString(g.calls([]string{"n", "m", "(unsigned)acc"}, 1))
	g.b.WriteString("\tprintf(\"acc %lu\\n\", acc);\n")
	for _, f := range g.funcs {
		fmt.Fprintf(&g.b, "\tprintf(\"cnt %s %%lu\\n\", cnt_%s);\n", f.Name, f.Name)
	}
	g.b.WriteString("\treturn 0;\n}\n")
}
