package linux

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// TestPlace checks where each kind of probe goes: its groups, their
// programs' context and its index in each.
func TestPlace(t *testing.T) {
	type where struct {
		Group string
		Kind  probe.Kind
		Ctx   bpf.Context
		Index uint32
	}
	mk := func(prov, mod, fn, name string, d probe.Detail) *probe.Probe {
		return &probe.Probe{Provider: prov, Module: mod, Function: fn, Name: name, Detail: d}
	}
	fbt := func(fn string, ret bool) *probe.Probe {
		name := "entry"
		if ret {
			name = "return"
		}
		return mk("fbt", "vmlinux", fn, name, &probe.KernelSite{Module: "vmlinux", Function: fn, Return: ret})
	}
	pid := func(off uint64, ret bool) *probe.Probe {
		return mk("pid42", "a.out", "main", "entry", &probe.UserSite{PID: 42, Path: "/bin/a.out", Addr: 0x1000, Offset: off, Return: ret})
	}
	// Probes placed in order, each with where it goes.
	tests := []struct {
		p    *probe.Probe
		want []where
	}{
		{mk("dtrace", "", "", "BEGIN", &probe.Run{}), []where{{"BEGIN", probe.KindRun, bpf.CtxRun, 0}}},
		{mk("dtrace", "", "", "END", &probe.Run{}), []where{{"END", probe.KindRun, bpf.CtxRun, 0}}},
		{mk("profile", "", "", "tick-1", &probe.Timer{Tick: true, Interval: time.Second}), []where{{"tick-1", probe.KindTimer, bpf.CtxRun, 0}}},
		{mk("profile", "", "", "profile-97", &probe.Timer{Interval: time.Second / 97}), []where{{"profile-97", probe.KindTimer, bpf.CtxPerf, 0}}},
		{mk("syscall", "vmlinux", "read", "entry", &probe.Syscall{Name: "read"}), []where{{"syscall-entry", probe.KindSyscall, bpf.CtxSysEnter, 0}}},
		{mk("syscall", "vmlinux", "write", "return", &probe.Syscall{Name: "write", Return: true}), []where{{"syscall-return", probe.KindSyscall, bpf.CtxSysExit, 1}}},
		{fbt("vfs_read", false), []where{{"fbt-entry", probe.KindKernel, bpf.CtxEntry, 0}}},
		{fbt("vfs_write", false), []where{{"fbt-entry", probe.KindKernel, bpf.CtxEntry, 1}}},
		{fbt("vfs_read", true), []where{{"fbt-return", probe.KindKernel, bpf.CtxReturn, 0}}},
		// The same probe again keeps its index.
		{fbt("vfs_read", false), []where{{"fbt-entry", probe.KindKernel, bpf.CtxEntry, 0}}},
		{mk("kinst", "vmlinux", "vfs_read", "7", &probe.KernelSite{Module: "vmlinux", Function: "vfs_read", Offset: 7}), []where{{"kinst-entry", probe.KindKernel, bpf.CtxEntry, 0}}},
		{pid(0, false), []where{{"pid-entry", probe.KindUser, bpf.CtxEntry, 0}}},
		{pid(0, true), []where{{"pid-return", probe.KindUser, bpf.CtxReturn, 0}}},
		{mk("test_prov42", "a.out", "main", "go", &probe.USDTSite{PID: 42, Path: "/bin/a.out", Points: []probe.USDTPoint{{Addr: 0x10, Args: "-4@%edi"}, {Addr: 0x20}}}),
			[]where{{"usdt", probe.KindUSDT, bpf.CtxUSDT, 0}, {"usdt", probe.KindUSDT, bpf.CtxUSDT, 1}}},
		{mk("proc", "vmlinux", "", "exec", &probe.SDT{Sites: []probe.SDTSite{
			{System: "syscalls", Event: "sys_enter_execve", Args: []string{"copyinstr(arg0)"}},
			{System: "sched", Event: "sched_process_exec"},
		}}), []where{{"tp:sys_enter_execve", probe.KindSDT, bpf.CtxSyscallTP, 0}, {"rawtp:sched_process_exec", probe.KindSDT, bpf.CtxRawTP, 0}}},
		{mk("proc", "vmlinux", "", "exec-success", &probe.SDT{Sites: []probe.SDTSite{{System: "sched", Event: "sched_process_exec"}}}),
			[]where{{"rawtp:sched_process_exec", probe.KindSDT, bpf.CtxRawTP, 1}}},
		// A site with Since: the start's tracepoint gets a program of
		// its own, which fires no probe.
		{mk("lockstat", "vmlinux", "", "adaptive-block", &probe.SDT{Sites: []probe.SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
			Cond: "arg8 != 0 && (int)arg1 == 0 && arg9 == 32", Args: []string{"(struct mutex *)arg0", "timestamp - arg8"}}}}),
			[]where{{"rawtp:contention_end", probe.KindSDT, bpf.CtxRawTP, 0}}},
		{mk("cpc", "", "", "cpu_clock-all-10000", &probe.CPC{Event: "cpu_clock", Type: probe.PerfTypeSoftware, Count: 10000, User: true, Kernel: true}),
			[]where{{"cpc:::cpu_clock-all-10000", probe.KindCPC, bpf.CtxPerf, 0}}},
		// A site's expression compiled once serves every site; a
		// site of an event's record is on a perf event program.
		{mk("proc", "vmlinux", "", "exec2", &probe.SDT{Sites: []probe.SDTSite{
			{System: "syscalls", Event: "sys_enter_execveat", Args: []string{"copyinstr(arg0)"}}}}),
			[]where{{"tp:sys_enter_execveat", probe.KindSDT, bpf.CtxSyscallTP, 0}}},
		{mk("sdt", "task", "", "task_rename", &probe.SDT{Sites: []probe.SDTSite{
			{System: "task", Event: "task_rename", Record: true, Args: []string{"copyinstr(arg0)"}}}}),
			[]where{{"event:task:task_rename", probe.KindSDT, bpf.CtxTP, 0}}},
		// A site at a function's entry: a kprobe program per function,
		// serving every probe with a site there, which reads the
		// function's parameters.
		{mk("lockstat", "vmlinux", "", "adaptive-acquire", &probe.SDT{Sites: []probe.SDTSite{
			{Function: "mutex_lock", Args: []string{"(struct mutex *)arg0"}},
			{Function: "mutex_lock_killable", Args: []string{"(struct mutex *)arg0"}}}}),
			[]where{{"fn:mutex_lock", probe.KindSDT, bpf.CtxEntry, 0}, {"fn:mutex_lock_killable", probe.KindSDT, bpf.CtxEntry, 0}}},
		{mk("test", "vmlinux", "", "second", &probe.SDT{Sites: []probe.SDTSite{
			{Function: "mutex_lock", Cond: "arg1 != 0", Args: []string{"arg1"}}}}),
			[]where{{"fn:mutex_lock", probe.KindSDT, bpf.CtxEntry, 1}}},
	}
	compiled := 0
	pl := &placer{groups: map[string]*group{}, compile: func(string) (*dif.Object, error) {
		compiled++
		return &dif.Object{}, nil
	}}
	for _, tt := range tests {
		pls, err := pl.place(tt.p, tt.p.Provider)
		if err != nil {
			t.Errorf("%s: %v", tt.p, err)
			continue
		}
		var got []where
		for _, x := range pls {
			got = append(got, where{x.g.name, x.g.kind, x.g.ctx, x.index})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.p, diff)
		}
	}
	if compiled != 6 {
		t.Errorf("%d site expressions compiled, want 6", compiled)
	}
	// A function's group: its one kprobe, the parameters its sites
	// read, arg0 and arg1 at mutex_lock, and each site's index.
	for _, fn := range []struct {
		name    string
		rawArgs int
	}{{"mutex_lock", 2}, {"mutex_lock_killable", 1}} {
		g := pl.groups["fn:"+fn.name]
		if g == nil {
			t.Errorf("no group fn:%s", fn.name)
			continue
		}
		want := []*probe.KernelSite{{Module: "vmlinux", Function: fn.name}}
		if diff := cmp.Diff(want, g.kernel); diff != "" {
			t.Errorf("group fn:%s's kprobes (-want +got):\n%s", fn.name, diff)
		}
		if g.rawArgs != fn.rawArgs {
			t.Errorf("group fn:%s reads %d arguments, want %d", fn.name, g.rawArgs, fn.rawArgs)
		}
		for i, st := range g.sites {
			if st.Index != uint32(i) {
				t.Errorf("group fn:%s: site %d has index %d", fn.name, i, st.Index)
			}
		}
	}
	// The pair's programs, and the tracepoint arguments each reads:
	// the start's lock and flags, the end's own two, not the span's.
	for _, sp := range []struct {
		group   string
		span    bpf.Span
		rawArgs int
	}{{"rawtp:contention_begin", bpf.SpanStart, 2}, {"rawtp:contention_end", bpf.SpanEnd, 2}} {
		g := pl.groups[sp.group]
		if g == nil {
			t.Errorf("no group %s", sp.group)
			continue
		}
		if g.span != sp.span || g.rawArgs != sp.rawArgs || g.tp.Event != sp.group[len("rawtp:"):] {
			t.Errorf("group %s: span %d, %d arguments read, tracepoint %s; want span %d, %d", sp.group, g.span, g.rawArgs, g.tp.Event, sp.span, sp.rawArgs)
		}
	}
	// The groups' sites, for their attachments.
	for _, g := range pl.order {
		var n int
		switch g.kind {
		case probe.KindKernel:
			n = len(g.kernel)
		case probe.KindUser:
			n = len(g.users)
		case probe.KindUSDT:
			n = len(g.usdt)
		case probe.KindSDT:
			n = len(g.sites)
		default:
			continue
		}
		if n != len(g.index) {
			t.Errorf("group %s: %d sites, %d indexes", g.name, n, len(g.index))
		}
	}
}

// A detail that claims a kind not its own.
type oddDetail struct{}

func (*oddDetail) Kind() probe.Kind { return probe.KindTimer }

// TestPlaceUnknown checks that a probe of no kind the runtime knows, or
// whose detail is not of its kind, is refused by name.
func TestPlaceUnknown(t *testing.T) {
	tests := []struct {
		p    *probe.Probe
		want string
	}{
		{&probe.Probe{Provider: "odd", Name: "x"}, "odd:::x: the odd provider is not supported by the Linux runtime yet"},
		{&probe.Probe{Provider: "odd", Name: "x", Detail: &oddDetail{}}, "odd:::x: its detail, a *linux.oddDetail, is not of its kind"},
	}
	for _, tt := range tests {
		pl := &placer{groups: map[string]*group{}}
		_, err := pl.place(tt.p, "odd")
		if err == nil || err.Error() != tt.want {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
		if len(pl.order) != 0 {
			t.Errorf("%d groups made", len(pl.order))
		}
	}
}

// TestArgsNamed checks the arguments an expression names: argN with N
// one digit, a word of its own.
func TestArgsNamed(t *testing.T) {
	tests := []struct {
		e    string
		want []int
	}{
		{"arg0", []int{0}},
		{"arg1 + (arg9)", []int{1, 9}},
		{"arg3*arg2 == arg3", []int{3, 2, 3}},
		{"((struct sock *)arg0)->sk", []int{0}},
		{"xarg1 arg1x _arg2 arg2_ arg10 argarg4 arg", nil},
		{"Arg1 ARG1 arg", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []int
		for i := range argsNamed(tt.e) {
			got = append(got, i)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("argsNamed(%q) (-want +got):\n%s", tt.e, diff)
		}
	}
}
