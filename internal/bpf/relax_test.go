package bpf

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
)

// TestRelax runs programs whose jumps reach past 32767 instructions,
// conditional and not, forward and back, once relaxed.
func TestRelax(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: loading BPF programs needs CAP_BPF")
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Skip(err)
	}
	const far = 40000
	pad := func() asm.Instructions {
		insns := make(asm.Instructions, far)
		for i := range insns {
			insns[i] = asm.Add.Imm(asm.R0, 1)
		}
		return insns
	}
	for _, c := range []struct {
		name string
		arg  int64
		want uint32
	}{{"taken", 1, 7}, {"not taken", 0, far + 9}} {
		t.Run(c.name, func(t *testing.T) {
			// A long conditional jump forward, a long unconditional
			// one back.
			insns := asm.Instructions{
				asm.LoadImm(asm.R1, c.arg, asm.DWord),
				asm.Mov.Imm(asm.R0, 9),
				asm.Ja.Label("start"),
				asm.Return().WithSymbol("back"),
				asm.JEq.Imm(asm.R1, 1, "far").WithSymbol("start"),
			}
			insns = append(insns, pad()...)
			insns = append(insns, asm.Return(), asm.Mov.Imm(asm.R0, 7).WithSymbol("far"), asm.Ja.Label("back"))
			insns = relax(insns)
			prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, Instructions: insns, License: "GPL"})
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			got, _, err := prog.Test(make([]byte, 14))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("returned %d, want %d", got, c.want)
			}
		})
	}
}
