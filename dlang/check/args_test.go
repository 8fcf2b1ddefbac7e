package check_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// probeTable answers Match from a table of descriptions.
type probeTable map[string]check.ProbeMatch

func (p probeTable) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) {
	return p[d.String()], nil
}

// TestArgsErrors checks args[] against what the probes say of their
// arguments, with dt_idcook_args's tags and words: an unstable set has
// no types, a probe with no typed arguments has an argc of 0, and an
// argument whose type is unknown cannot be used.
func TestArgsErrors(t *testing.T) {
	probes := probeTable{
		"dtrace:::BEGIN":       {Count: 1, Typed: true},
		"fbt::f:entry":         {Count: 1, Typed: true, Args: []types.Type{types.IntType, nil}},
		"fbt::f*:entry":        {Count: 2},
		"syscall::read:entry":  {Count: 1, Typed: true, Args: []types.Type{types.IntType}},
		"syscall::read*:entry": {Count: 2, Typed: true, Args: []types.Type{types.IntType}},
	}
	tests := []struct {
		src string
		tag diag.Tag
		msg string
	}{
		{"dtrace:::BEGIN { trace(args[0]); }", diag.D_ARGS_IDX, "line 1: index 0 is out of range for dtrace:::BEGIN args[ ]"},
		{"fbt::f:entry { trace(args[2]); }", diag.D_ARGS_IDX, "line 1: index 2 is out of range for fbt::f:entry args[ ]"},
		{"fbt::f:entry { trace(args[1]); }", diag.D_ARGS_TYPE, "line 1: failed to resolve native type for args[1]"},
		{"fbt::f*:entry { trace(args[0]); }", diag.D_ARGS_MULTI, "line 1: args[ ] may not be referenced because probe description fbt::f*:entry matches an unstable set of probes"},
		{"syscall::read*:entry { trace(args[1]); }", diag.D_ARGS_IDX, "line 1: index 1 is out of range for syscall::read*:entry args[ ]"},
	}
	for _, tt := range tests {
		// Every case has its message, so isError compares it.
		if _, err := checkWith(&check.Config{Probes: probes}, tt.src); !isError(err, tt.tag, tt.msg) {
			t.Errorf("%s: got %v, want [%s] %s", tt.src, err, tt.tag, tt.msg)
		}
	}
	for _, src := range []string{"fbt::f:entry { trace(args[0]); }", "syscall::read*:entry { trace(args[0]); }"} {
		if _, err := checkWith(&check.Config{Probes: probes}, src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
