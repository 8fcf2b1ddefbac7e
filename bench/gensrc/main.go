// Command gensrc writes the benchmarks' inputs: for the parser
// benchmark, a D script and a Go file of about the same size (package
// internal/benchsrc); with -clauses, the script of bench/scale instead,
// n small clauses as a user writes them (120,419 make the 10 MB script
// of issue 10).
//
//	go run ./bench/gensrc DIR [LINES]
//	go run ./bench/gensrc -clauses 120419 DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kdtrace/kdtrace/internal/benchsrc"
)

func main() {
	clauses := flag.Int("clauses", 0, "write DIR/scale.d, of this many clauses")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gensrc DIR [LINES]\n       gensrc -clauses N DIR")
		os.Exit(2)
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
	}
	dir := flag.Arg(0)
	if *clauses > 0 {
		write(filepath.Join(dir, "scale.d"), benchsrc.Clauses(*clauses))
		return
	}
	lines := 5000
	if flag.NArg() > 1 {
		n, err := strconv.Atoi(flag.Arg(1))
		if err != nil {
			fmt.Fprintln(os.Stderr, "gensrc:", err)
			os.Exit(2)
		}
		lines = n
	}
	write(filepath.Join(dir, "bench.d"), benchsrc.DScript(lines))
	write(filepath.Join(dir, "bench.go"), benchsrc.GoFile(lines))
}

func write(name, text string) {
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gensrc:", err)
		os.Exit(1)
	}
}
