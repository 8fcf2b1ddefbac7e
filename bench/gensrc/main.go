// Command gensrc writes the parser benchmark's inputs: a D script and a
// Go file of about the same size (package internal/benchsrc).
//
//	go run ./bench/gensrc DIR [LINES]
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kdtrace/kdtrace/internal/benchsrc"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gensrc DIR [LINES]")
		os.Exit(2)
	}
	lines := 5000
	if len(os.Args) > 2 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "gensrc:", err)
			os.Exit(2)
		}
		lines = n
	}
	dir := os.Args[1]
	for name, text := range map[string]string{
		"bench.d":  benchsrc.DScript(lines),
		"bench.go": benchsrc.GoFile(lines),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gensrc:", err)
			os.Exit(1)
		}
	}
}
