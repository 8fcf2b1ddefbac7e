package bpf

import (
	"math"

	"github.com/cilium/ebpf/asm"
)

const nearJump = (math.MaxInt16 + 1) / 4

// relax rewrites the jumps of insns whose target is further than a
// jump's 16-bit offset reaches, as a clause of many subroutine calls
// makes a program of more than 32767 instructions: an unconditional
// jump becomes a long one (BPF_JMP32 | BPF_JA, Linux 6.6), a
// conditional one jumps over an unconditional jump to a long one. The
// kernel's rewrites (inlined helpers and bpf_loop calls) add
// instructions between a jump and its target after this: a jump is
// near only within nearJump instructions, a quarter of the range.

func relax(insns asm.Instructions) asm.Instructions {
	for {
		offsets := make([]int64, len(insns)+1)
		symbols := map[string]int64{}
		for i, ins := range insns {
			offsets[i+1] = offsets[i] + int64(ins.Size()/asm.InstructionSize)
			if s := ins.Symbol(); s != "" {
				symbols[s] = offsets[i]
			}
		}
		var out asm.Instructions
		changed := false
		for i, ins := range insns {
			ref := ins.Reference()
			op := ins.OpCode.JumpOp()
			target, ok := symbols[ref]
			isJump := ins.OpCode.Class() == asm.JumpClass && op != asm.Call && op != asm.Exit && ins.Offset == -1
			if ref == "" || !ok || !isJump {
				out = append(out, ins)
				continue
			}
			if d := target - offsets[i] - 1; d >= -nearJump && d <= nearJump {
				out = append(out, ins)
				continue
			}
			changed = true
			if op == asm.Ja {
				out = append(out, asm.LongJump(ref).WithSymbol(ins.Symbol()))
				continue
			}
			near := ins.WithReference("")
			near.Offset = 1
			out = append(out, near, asm.Ja.Label("").WithReference(""), asm.LongJump(ref))
			out[len(out)-2].Offset = 1
		}
		insns = out
		if !changed {
			return insns
		}
	}
}
