package attach

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/kdtrace/kdtrace/internal/probe"
)

// TestTrampolineTarget asks a made-up kernel's BTF which functions a
// trampoline can go on.
func TestTrampolineTarget(t *testing.T) {
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	file := &btf.Pointer{Target: &btf.Struct{Name: "file", Size: 8, Members: []btf.Member{{Name: "f", Type: long}}}}
	pair := &btf.Struct{Name: "pair", Size: 16, Members: []btf.Member{{Name: "a", Type: long}, {Name: "b", Type: long, Offset: 64}}}
	pairT := &btf.Typedef{Name: "pair_t", Type: pair}
	fn := func(name string, ret btf.Type, params ...btf.Type) *btf.Func {
		proto := &btf.FuncProto{Return: ret}
		for _, p := range params {
			proto.Params = append(proto.Params, btf.FuncParam{Name: "p", Type: p})
		}
		return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}
	}
	b, err := btf.NewBuilder([]btf.Type{
		fn("vfs_read", long, file, file, long, file),
		fn("six", &btf.Void{}, long, long, long, long, long, long),
		fn("seven", long, long, long, long, long, long, long, long),
		fn("takes", long, long, pairT),
		fn("gives", pair, long),
		fn("twice", long, long),
		fn("twice", long, file),
		&btf.Var{Name: "avar", Type: long},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		site probe.KernelSite
		want string // the refusal, "" for none
	}{
		{probe.KernelSite{Function: "vfs_read"}, ""},
		{probe.KernelSite{Function: "vfs_read", Return: true}, ""},
		{probe.KernelSite{Function: "six"}, ""},
		{probe.KernelSite{Function: "vfs_read", Offset: 5}, "a trampoline goes on a function's entry or return, not at an offset"},
		{probe.KernelSite{Function: "seven"}, "function seven has 7 arguments, over the 6 a trampoline saves"},
		{probe.KernelSite{Function: "takes"}, "argument 1 of function takes is a structure passed by value"},
		{probe.KernelSite{Function: "gives", Return: true}, "function gives returns a structure by value"},
		{probe.KernelSite{Function: "twice"}, "the kernel's BTF describes 2 functions named twice"},
		{probe.KernelSite{Function: "avar"}, "the kernel's BTF does not describe function avar"},
		{probe.KernelSite{Function: "nowhere"}, "the kernel's BTF does not describe function nowhere"},
	}
	for _, tt := range tests {
		err := trampolineTarget(spec, &tt.site)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", kernelSiteName(&tt.site), got, tt.want)
		}
	}
}
