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
// parses a Go file of the same shape and size with go/parser in its
// default mode, the reference the issue sets. All report lines/s.
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

func BenchmarkGoParser(b *testing.B) { benchGoParser(b, 0) }

// BenchmarkGoParserNoResolve is go/parser without object resolution,
// its fastest mode.
func BenchmarkGoParserNoResolve(b *testing.B) { benchGoParser(b, goparser.SkipObjectResolution) }

func benchGoParser(b *testing.B, mode goparser.Mode) {
	src := []byte(benchsrc.GoFile(5000))
	lines := float64(strings.Count(string(src), "\n"))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := goparser.ParseFile(token.NewFileSet(), "bench.go", src, mode); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(lines*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
