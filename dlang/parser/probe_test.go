package parser_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

// TestProbeCallback checks that Config.Probe is given each description
// as it is parsed, in order, macros expanded, and those before an error
// too: the size of a pointer to a type the parser is not told of stops
// this program in its second clause.
func TestProbeCallback(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string
		err       bool
	}{{
		name: "whole",
		src:  "BEGIN, syscall::read:entry\n{ x = 1; }\nproc$1:::exec-success /pid == $target/ {}\nEND\n{}\n",
		want: []string{":::BEGIN", "syscall::read:entry", "proc42:::exec-success", ":::END"},
	}, {
		name: "error",
		src:  "BEGIN {}\ntick-1s, profile:::tick-1ms { x = sizeof (in_addr_t *); }\nEND {}\n",
		want: []string{":::BEGIN", ":::tick-1s", "profile:::tick-1ms"},
		err:  true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			_, err := parser.ParseFile("t.d", []byte(tt.src), &parser.Config{
				Args:   []string{"t.d", "42"},
				Macros: map[string]string{"target": "7"},
				Probe:  func(d *ast.ProbeDesc) { got = append(got, d.String()) },
			})
			if (err != nil) != tt.err {
				t.Fatalf("ParseFile: %v, want error %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("descriptions (-want +got):\n%s", diff)
			}
		})
	}
}
