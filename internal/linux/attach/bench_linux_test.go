package attach

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// BenchmarkUprobes1000 attaches and detaches 1,000 pid offset probes,
// every instruction of many functions, as pid$target:a.out:f*: does,
// through uprobe_multi links. Per-site perf event links are left out:
// the kernel takes about 100 ms to remove each (an RCU grace period
// under its event mutex, so closing them at once does not help), 100 s
// for a thousand on the development machines.
func BenchmarkUprobes1000(b *testing.B) {
	needBPF(b)
	var src strings.Builder
	src.WriteString("volatile long sink;\n")
	for i := range 300 {
		fmt.Fprintf(&src, "__attribute__((noinline)) long f%d(long a) { long x = a * %d + 3; sink = x ^ (a << 3); return x + sink; }\n", i, i+2)
	}
	src.WriteString("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
	path := gcctest.Build(b, b.TempDir(), "many", src.String())
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var sites []*probe.UserSite
	for _, s := range syms {
		if _, err := strconv.Atoi(strings.TrimPrefix(s.Name, "f")); err != nil || s.Name[0] != 'f' || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		_, insts := function(b, path, s.Name)
		for _, in := range insts {
			if len(sites) < 1000 {
				sites = append(sites, &probe.UserSite{Path: path, Addr: s.Value, Size: s.Size, Offset: in.Addr - s.Value})
			}
		}
	}
	if len(sites) < 1000 {
		b.Fatalf("only %d sites", len(sites))
	}
	cookies := make([]uint64, len(sites))
	for i := range cookies {
		cookies[i] = uint64(i)
	}
	if !haveUprobeMulti() {
		b.Skip("this kernel has no uprobe_multi links")
	}
	c := loadCounter(b, ebpf.Kprobe, UprobeAttachType(), 1, byCookie...)
	for b.Loop() {
		a, err := Uprobes(c.prog, sites, cookies)
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}
