//go:build linux

package symbolize_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/symbolize"
	"github.com/kdtrace/kdtrace/record"
)

// consume prints one firing of an ECB with action act recording val
// through a consumer looking addresses up in s.
func consume(t *testing.T, s consumer.Symbols, act enabling.Action, val record.Value) string {
	t.Helper()
	l := record.NewLayout(record.DefaultOptions)
	eps, err := l.Add(&enabling.ECB{Actions: []enabling.Action{act}}, []record.Probe{{ID: 1, Provider: "dtrace", Name: "BEGIN"}})
	if err != nil {
		t.Fatal(err)
	}
	b := record.NewBuffer(4096)
	if _, err := b.Write(eps[0], 0, []record.Value{val}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := consumer.New(l, consumer.Config{Out: &out, Quiet: true, Symbols: s})
	if err := c.Consume(0, b.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func words(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// TestConsumerUser prints a process's addresses as dtrace's ustack(),
// usym(), uaddr() and umod() show them, from a running gcc program.
func TestConsumerUser(t *testing.T) {
	f := startFixture(t, "-fpie", "-pie")
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	f.stop()
	a := f.addr
	frame := func(s string) string { return strings.Repeat(" ", consumer.StackIndent) + s + "\n" }
	pad := func(s string) string { return fmt.Sprintf("  %-50s", s) }
	i8 := dif.IntType(8)
	pid := f.pid()
	tests := []struct {
		name string
		act  enabling.Action
		val  record.Value
		want string
	}{
		{"ustack", enabling.Action{Kind: dof.ActUStack, Arg: dof.UStackArg(4, 0)},
			record.Value{Ref: words(pid, a["leaf"]+5, a["helper"], a["getppid"]+3, a["heap"])},
			"\n" + frame("fixture`leaf+0x5") + frame("fixture`helper") + frame("libc.so.6`getppid+0x3") + frame(fmt.Sprintf("%#x", a["heap"]))},
		{"usym", enabling.Action{Kind: dof.ActUSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: a["leaf"] + 5, PID: pid}, pad("fixture`leaf")},
		{"uaddr", enabling.Action{Kind: dof.ActUAddr, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: a["table"] + 8, PID: pid}, pad("fixture`table+0x8")},
		{"umod", enabling.Action{Kind: dof.ActUMod, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: a["getppid"], PID: pid}, pad("libc.so.6")},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, consume(t, s, tt.act, tt.val)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestConsumerKernel prints kernel addresses as dtrace's stack(),
// sym() and mod() show them, as root reads kallsyms.
func TestConsumerKernel(t *testing.T) {
	tab, err := ksym.Kallsyms("/proc/kallsyms", "")
	if err != nil || tab.ZeroAddrs() {
		t.Skip("the kernel's addresses cannot be read: run as root")
	}
	addr := func(name string) uint64 {
		syms, err := tab.Lookup(ksym.KernelModule, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return syms[0].Addr
	}
	s := symbolize.New(symbolize.Config{Kallsyms: func() (*ksym.Table, error) { return tab, nil }})
	frame := func(s string) string { return strings.Repeat(" ", consumer.StackIndent) + s + "\n" }
	pad := func(s string) string { return fmt.Sprintf("  %-50s", s) }
	i8 := dif.IntType(8)
	read, sched := addr("vfs_read"), addr("schedule")
	tests := []struct {
		name string
		act  enabling.Action
		val  record.Value
		want string
	}{
		{"stack", enabling.Action{Kind: dof.ActStack, Arg: 3}, record.Value{Ref: words(read+0x12, sched, 0x1000)},
			"\n" + frame("kernel`vfs_read+0x12") + frame("kernel`schedule") + frame("0x1000")},
		{"sym", enabling.Action{Kind: dof.ActSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: read + 0x12}, pad("kernel`vfs_read")},
		{"mod", enabling.Action{Kind: dof.ActMod, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: sched + 1}, pad("kernel")},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, consume(t, s, tt.act, tt.val)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
