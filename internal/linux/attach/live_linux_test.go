package attach

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// needBPF skips a test that loads and attaches BPF programs where it
// cannot.
func needBPF(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("loading and attaching BPF programs needs root")
	}
}

// needTracefs skips a test of tracepoints read through tracefs where it
// is not mounted; .ci/run mounts it, as systemd does at boot.
func needTracefs(t testing.TB) {
	t.Helper()
	if err := haveTracefs(); err != nil {
		t.Skip(err)
	}
}

// A counter is a test program and its counts, an array of n.
type counter struct {
	prog   *ebpf.Program
	counts *ebpf.Map
	n      int
}

// loadCounter loads a program of type typ that adds one to counts[k],
// k being what the instructions key leave in R0 (with the context in
// R6), or does nothing if they jump to "exit".
func loadCounter(t testing.TB, typ ebpf.ProgramType, attach ebpf.AttachType, n int, key ...asm.Instruction) *counter {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: uint32(n)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	insns = append(insns, key...)
	insns = append(insns,
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kdtrace_attach", Type: typ, AttachType: attach, Instructions: insns, License: "GPL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	return &counter{prog, m, n}
}

// byCookie keys the counts by the attach cookie.
var byCookie = []asm.Instruction{asm.Mov.Reg(asm.R1, asm.R6), asm.FnGetAttachCookie.Call()}

func (c *counter) read(t *testing.T) []uint64 {
	t.Helper()
	out := make([]uint64, c.n)
	for i := range out {
		if err := c.counts.Lookup(uint32(i), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (c *counter) id(t *testing.T) ebpf.ProgramID {
	t.Helper()
	info, err := c.prog.Info()
	if err != nil {
		t.Fatal(err)
	}
	id, ok := info.ID()
	if !ok {
		t.Fatal("the kernel gives no program IDs")
	}
	return id
}

// linksOf counts the BPF links of the kernel that hold program id.
func linksOf(t *testing.T, ids ...ebpf.ProgramID) int {
	t.Helper()
	n := 0
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		info, err := it.Link.Info()
		if err == nil && slices.Contains(ids, info.Program) {
			n++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// perfEvents counts this process's perf event files.
func perfEvents(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); target == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// tracefsEntries returns the text probe entries tracefs lists, which
// this package must never make.
func tracefsEntries(t *testing.T) string {
	t.Helper()
	var all []string
	for _, dir := range tracefsDirs {
		for _, f := range []string{"uprobe_events", "kprobe_events"} {
			if b, err := os.ReadFile(dir + "/" + f); err == nil {
				all = append(all, string(b))
			}
		}
	}
	return strings.Join(all, "")
}

// A fixture is a running fixtureProgram.
type fixture struct {
	path string
	cmd  *exec.Cmd
	in   io.Writer
	out  *bufio.Reader
}

func startFixture(t *testing.T, path string) *fixture {
	t.Helper()
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	f := &fixture{path, cmd, in, bufio.NewReader(out)}
	f.run(t, 0) // it has started and mapped what it maps
	return f
}

func (f *fixture) pid() int { return f.cmd.Process.Pid }

// run has the fixture make n rounds of calls and returns what it
// printed.
func (f *fixture) run(t *testing.T, n int) string {
	t.Helper()
	if _, err := io.WriteString(f.in, strconv.Itoa(n)+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := f.out.ReadString('\n')
	if err != nil {
		t.Fatalf("the fixture died: %v (%v)", err, f.cmd.Wait())
	}
	return strings.TrimSpace(line)
}

func waitFor(cond func() bool) bool {
	for range 100 {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// programExists reports whether the kernel still has program id.
func programExists(id ebpf.ProgramID) bool {
	p, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	p.Close()
	return true
}

// bothLinkKinds runs f with uprobes attached through uprobe_multi links
// (where the kernel has them) and through per-site perf event links.
func bothLinkKinds(t *testing.T, f func(t *testing.T, multi bool)) {
	for _, multi := range []bool{true, false} {
		name := "perf_event"
		if multi {
			name = "uprobe_multi"
		}
		t.Run(name, func(t *testing.T) {
			if multi && !haveUprobeMulti() {
				t.Skip("this kernel has no uprobe_multi links")
			}
			saved := uprobeMulti
			uprobeMulti = func() bool { return multi }
			defer func() { uprobeMulti = saved }()
			f(t, multi)
		})
	}
}
