// Package benchsrc generates the inputs of kdtrace's parser benchmarks: a
// D script and a Go file of the same shape and about the same size, so
// that kdtrace's parser can be measured beside go/parser.
package benchsrc

import (
	"fmt"
	"strings"
)

// DScript returns a D script of about lines lines: clauses of eleven
// lines with three probe descriptions, a predicate and seven statements
// mixing casts, aggregations, thread- and clause-locals and operators.
func DScript(lines int) string {
	var b strings.Builder
	b.WriteString("#pragma D option quiet\ntypedef struct req { int len; char *buf; } req_t;\n\n")
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < lines-11; i++ {
		fmt.Fprintf(&b, "syscall::read%d:entry, syscall::write%d:entry, fbt:kernel:vfs_op%d:return\n", i, i, i)
		fmt.Fprintf(&b, "/pid == %d && execname != \"proc%d\" || (arg0 & 0x%x) != 0/\n{\n", 1000+i, i, i+1)
		fmt.Fprintf(&b, "\tself->ts%d = timestamp - (vtimestamp >> 3) * %d;\n", i, i%7+1)
		fmt.Fprintf(&b, "\tthis->r = (req_t *)arg1;\n")
		fmt.Fprintf(&b, "\t@lat[probefunc, %d] = quantize(timestamp - self->ts%d);\n", i, i)
		fmt.Fprintf(&b, "\t@bytes[execname] = sum(this->r->len + arg2 %% %d);\n", i%13+2)
		fmt.Fprintf(&b, "\tx%d = arg0 > %d ? (int)arg1 : -arg2 << 2;\n", i, i)
		fmt.Fprintf(&b, "\tprintf(\"%%s %%d\\n\", stringof(this->r->buf), x%d++);\n", i)
		fmt.Fprintf(&b, "\tcounts[pid, tid] += !(arg3 ^ %d) | ~arg4;\n}\n\n", i)
	}
	return b.String()
}

// GoFile returns a Go source file of about lines lines, built of
// functions of the same size and statement mix as DScript's clauses.
func GoFile(lines int) string {
	var b strings.Builder
	b.WriteString("package bench\n\ntype req struct {\n\tlen int\n\tbuf *byte\n}\n\nvar counts = map[[2]int]int{}\n\n")
	for i := 0; strings.Count(b.String(), "\n") < lines-11; i++ {
		fmt.Fprintf(&b, "func probe%d(pid, tid int, execname string, arg0, arg1, arg2, arg3, arg4 int, r *req) int {\n", i)
		fmt.Fprintf(&b, "\tif !(pid == %d && execname != \"proc%d\" || (arg0&0x%x) != 0) {\n\t\treturn 0\n\t}\n", 1000+i, i, i+1)
		fmt.Fprintf(&b, "\tts := arg0 - (arg1>>3)*%d\n", i%7+1)
		fmt.Fprintf(&b, "\tlat := ts + r.len + arg2%%%d\n", i%13+2)
		fmt.Fprintf(&b, "\tx := int(arg1) << 2\n")
		fmt.Fprintf(&b, "\tcounts[[2]int{pid, tid}] += (arg3 ^ %d) | ^arg4\n", i)
		fmt.Fprintf(&b, "\treturn lat + x\n}\n\n")
	}
	return b.String()
}
