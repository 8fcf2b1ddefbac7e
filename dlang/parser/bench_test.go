package parser_test

import (
	goparser "go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/internal/benchsrc"
)

// BenchmarkParse parses a generated 5,000-line D script; BenchmarkGoParser
// parses a Go file of the same shape and size with go/parser, the
// reference the issue sets. Both report lines/s.
func BenchmarkParse(b *testing.B) {
	src := []byte(benchsrc.DScript(5000))
	lines := float64(strings.Count(string(src), "\n"))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parser.ParseFile("bench.d", src, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(lines*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkGoParser(b *testing.B) {
	src := []byte(benchsrc.GoFile(5000))
	lines := float64(strings.Count(string(src), "\n"))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := goparser.ParseFile(token.NewFileSet(), "bench.go", src, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(lines*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
