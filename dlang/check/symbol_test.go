package check_test

import (
	"errors"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// symbolTable is a kernel's symbols for the checker: a function, typed
// data, untyped data, and a module's data.
type symbolTable map[string]*check.KernelSymbol

var errNoSymbol = errors.New("Unknown symbol name")

func (s symbolTable) Symbol(mod, name string) (*check.KernelSymbol, error) {
	if mod != "" && mod != "vmlinux" && mod != "ext4" {
		return nil, errors.New("Unknown module name")
	}
	ks, ok := s[name]
	if !ok || mod != "" && ks.Module != mod {
		return nil, errNoSymbol
	}
	return ks, nil
}

var kernelSymbols = symbolTable{
	"vfs_read":     {Name: "vfs_read", Module: "vmlinux", Addr: 0xffffffff816d5b70, HasAddr: true, Func: true, Primary: true},
	"max_pfn":      {Name: "max_pfn", Module: "vmlinux", Addr: 0xffffffff83100000, HasAddr: true, Type: types.ULong, Primary: true},
	"linux_banner": {Name: "linux_banner", Module: "vmlinux", Addr: 0xffffffff82612340, HasAddr: true, Primary: true},
	"ext4_fs":      {Name: "ext4_fs", Module: "ext4", Addr: 0xffffffffc0a2c000, HasAddr: true, Type: types.IntType},
}

func checkWithSymbols(src string) (*check.Info, error) {
	return checkWith(&check.Config{Symbols: kernelSymbols}, src)
}

func TestSymbolTypes(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"BEGIN { x = `max_pfn; }", "unsigned long"},
		{"BEGIN { x = vmlinux`max_pfn; }", "unsigned long"},
		{"BEGIN { x = &`max_pfn; }", "unsigned long *"},
		{"BEGIN { x = ext4`ext4_fs; }", "int"},
		// dtrace's type of every function symbol.
		{"BEGIN { x = `vfs_read; }", "int (*)()"},
		{"BEGIN { x = &`vfs_read; }", "int (**)()"},
		// Untyped data: its address only.
		{"BEGIN { x = &`linux_banner; }", "void *"},
		{"BEGIN { x = sizeof (`max_pfn); }", "size_t"},
	} {
		info, err := checkWithSymbols(tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		var got types.Type
		for e, v := range info.Values {
			if p := e.Pos(); p.Line == 1 && int(p.Col) == lastAssign(tt.src) {
				got = v.Type
			}
		}
		if got == nil || got.String() != tt.want {
			t.Errorf("%s: type %v, want %s", tt.src, got, tt.want)
		}
	}
}

func TestSymbolErrors(t *testing.T) {
	for _, tt := range []struct {
		src string
		tag diag.Tag
		msg string
	}{
		{"BEGIN { trace(`nosuch); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve `nosuch: Unknown symbol name"},
		{"BEGIN { trace(ext4`max_pfn); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve ext4`max_pfn: Unknown symbol name"},
		{"BEGIN { trace(xfs`max_pfn); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve xfs`max_pfn: Unknown module name"},
		{"BEGIN { trace(``max_pfn); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve ``max_pfn: Unknown symbol name"},
		{"BEGIN { trace(vmlinux``max_pfn); }", diag.D_SYM_BADREF, "line 1: kernel module 'vmlinux' symbol 'max_pfn' may not be referenced as a user symbol"},
		{"BEGIN { trace(`linux_banner); }", diag.D_SYM_NOTYPES, "line 1: no symbolic type information is available for vmlinux`linux_banner: No type information available for symbol"},
		{"BEGIN { x = sizeof (`linux_banner); }", diag.D_SYM_NOTYPES, ""},
		{"BEGIN { `max_pfn = 1; }", diag.D_OP_WRITE, ""},
		{"BEGIN { &`max_pfn = 0; }", diag.D_OP_LVAL, ""},
	} {
		if _, err := checkWithSymbols(tt.src); !isError(err, tt.tag, tt.msg) {
			t.Errorf("%s: %v, want [%s] %s", tt.src, err, tt.tag, tt.msg)
		}
	}
}
