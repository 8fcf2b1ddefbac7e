//go:build linux

package probe

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// TestLiveSDTArgs types the SDT probes' arguments with the running
// kernel's BTF.
func TestLiveSDTArgs(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	c, err := Live(btfTypes(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc  Desc
		args  []string
		xargs []string
	}{
		{Desc{"proc", "", "", "create"}, []string{"struct task_struct *", "struct task_struct *", "u64"},
			[]string{"psinfo_t *", "psinfo_t *", "int"}},
		{Desc{"proc", "", "", "exec"}, []string{"string"}, nil},
		{Desc{"proc", "", "", "exit"}, []string{"int"}, nil},
		{Desc{"proc", "", "", "signal-send"}, []string{"struct task_struct *", "struct task_struct *", "int"},
			[]string{"lwpsinfo_t *", "psinfo_t *", ""}},
		{Desc{"proc", "", "", "signal-handle"}, []string{"int", "struct kernel_siginfo *", "__sighandler_t"},
			[]string{"", "siginfo_t *", ""}},
		{Desc{"sched", "", "", "on-cpu"}, nil, nil},
		{Desc{"sched", "", "", "off-cpu"}, []string{"struct task_struct *", "struct task_struct *"},
			[]string{"lwpsinfo_t *", "psinfo_t *"}},
		{Desc{"sched", "", "", "enqueue"}, []string{"struct task_struct *", "struct task_struct *", "struct rq *", "int"},
			[]string{"lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *", ""}},
		{Desc{"io", "", "", "start"}, []string{"struct request *", "struct request *", "struct request *"},
			[]string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}},
		{Desc{"io", "", "", "wait-start"}, nil, nil},
	}
	for _, tt := range tests {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Fatalf("Info(%v): %v", tt.desc, err)
		}
		got := typeStrings(info.Args)
		if info.Matches != 1 || !cmp.Equal(got, tt.args) || !cmp.Equal(info.XArgs, tt.xargs) {
			t.Errorf("Info(%v) = %d matches, args %q, xargs %q; want 1, %q, %q",
				tt.desc, info.Matches, got, info.XArgs, tt.args, tt.xargs)
		}
	}
	// Every native type is the kernel's.
	for _, pv := range []string{"proc", "sched", "io", "ip", "tcp", "udp"} {
		ps, err := c.Match(Desc{Provider: pv})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			args, err := p.Args()
			if err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			for i, a := range args {
				if a == nil {
					t.Errorf("%v: args[%d] (%s) is not in the kernel's BTF", p, i, p.args.(*sdtProvider).spec(p).args[i].native)
				}
			}
		}
	}
}

// tracefsEvents returns tracefs's events directory, "" when tracefs is
// not mounted.
func tracefsEvents() string {
	for _, dir := range []string{"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"} {
		if _, err := os.Stat(filepath.Join(dir, "sched")); err == nil {
			return dir
		}
	}
	return ""
}

// TestLiveSDTSites checks the SDT probes' sites against the running
// kernel: each tracepoint and function exists, the arguments the
// expressions use exist, and an argument passed on as it is has its
// declared native type. It also checks the members the expressions read.
func TestLiveSDTSites(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	kt, err := btfTypes(t).Types(KernelModule)
	if err != nil {
		t.Fatal(err)
	}
	events := tracefsEvents()
	if events == "" {
		t.Log("tracefs is not mounted: trace events are not checked")
	}
	for _, pv := range []struct {
		name  string
		specs []sdtSpec
	}{{"proc", procSpecs}, {"sched", schedSpecs}, {"io", ioSpecs}, {"ip", ipSpecs}, {"tcp", tcpSpecs}, {"udp", udpSpecs}, {"lockstat", lockstatSpecs}} {
		for _, spec := range pv.specs {
			name := pv.name + ":::" + spec.name
			for i, s := range append(spec.sites[:len(spec.sites):len(spec.sites)], spec.older...) {
				// The site's parameters: nil for a syscall event's.
				var params []types.Type
				nparams := -1
				switch {
				case s.Function != "":
					f, _, err := kt.LookupFunc(s.Function)
					if f == nil && err == nil && i >= len(spec.sites) && spec.sites[0].Function != "" {
						if newer, _, _ := kt.LookupFunc(spec.sites[0].Function); newer != nil {
							// An older kernel's function, renamed
							// since.
							continue
						}
					}
					if f == nil || err != nil {
						t.Errorf("%s: function %s is not in BTF (%v)", name, s.Function, err)
						continue
					}
					params = f.Params
				case s.System == "syscalls":
					if events == "" {
						continue
					}
					data, err := os.ReadFile(filepath.Join(events, s.System, s.Event, "format"))
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					fields, err := formatFields(data)
					if err != nil {
						t.Fatal(err)
					}
					nparams = len(fields)
				default:
					if s.System != "" && events != "" {
						if _, err := os.Stat(filepath.Join(events, s.System, s.Event)); err != nil {
							t.Errorf("%s: trace event %v: %v", name, &s, err)
						}
					}
					tp, err := kt.LookupType("btf_trace_" + s.Event)
					if tp == nil || err != nil {
						t.Errorf("%s: tracepoint %s is not in BTF (%v)", name, s.Event, err)
						continue
					}
					ptr, ok := types.Resolve(tp).(*types.Pointer)
					var f *types.Func
					if ok {
						f, ok = types.Resolve(ptr.Elem).(*types.Func)
					}
					if !ok || len(f.Params) == 0 {
						t.Errorf("%s: btf_trace_%s is %v, want a pointer to a function of a context and more", name, s.Event, tp)
						continue
					}
					params = f.Params[1:]
					if s.Since != "" {
						if tp, err := kt.LookupType("btf_trace_" + s.Since); tp == nil || err != nil {
							t.Errorf("%s: tracepoint %s is not in BTF (%v)", name, s.Since, err)
						}
					}
				}
				if params != nil {
					nparams = len(params)
				}
				for _, e := range append([]string{s.Cond}, s.Args...) {
					for _, m := range argRef.FindAllStringSubmatch(e, -1) {
						// A site with Since reads the span's at arg8
						// and arg9.
						if n, _ := strconv.Atoi(m[1]); n >= nparams && (s.Since == "" || n < 8) {
							t.Errorf("%s: site %v has %d arguments; %q uses arg%d", name, &s, nparams, e, n)
						}
					}
				}
				for i, n := range siteArgs(&s) {
					if n < 0 || params == nil || n >= len(params) {
						continue
					}
					// The cast may leave out a qualifier: the
					// tracepoints declare const what the
					// translators take, and a void * is what the
					// spec says it points to.
					got := strings.ReplaceAll(params[n].String(), "const ", "")
					if want := spec.args[i].native; got != want && got != "void *" {
						t.Errorf("%s: args[%d] is %v's arg%d, a %s; declared %s", name, i, &s, n, got, want)
					}
				}
			}
		}
	}
	// The members the expressions read.
	for _, m := range []struct{ typ, member string }{
		{"struct task_struct", "nvcsw"}, {"struct task_struct", "nivcsw"}, {"struct task_struct", "pid"},
		{"struct task_struct", "tgid"}, {"struct task_struct", "exit_code"}, {"struct task_struct", "prio"},
		{"struct task_struct", "normal_prio"}, {"struct k_sigaction", "sa"}, {"struct sigaction", "sa_handler"},
		// The network providers' (net.go).
		{"struct sk_buff", "head"}, {"struct sk_buff", "data"}, {"struct sk_buff", "network_header"},
		{"struct sk_buff", "protocol"}, {"struct sk_buff", "sk"}, {"struct sk_buff", "dev"},
		{"struct sock", "sk_protocol"}, {"struct sock", "sk_err"}, {"struct sock_common", "skc_state"},
		{"struct iphdr", "frag_off"}, {"struct iphdr", "protocol"}, {"struct ipv6hdr", "nexthdr"},
	} {
		st, err := kt.LookupType(m.typ)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := types.Resolve(st).(*types.Struct)
		if !ok {
			t.Errorf("%s is %v", m.typ, st)
			continue
		}
		if _, found := s.Member(m.member); !found {
			t.Errorf("%s has no member %s", m.typ, m.member)
		}
	}
}

// TestLiveIOStartSite checks that io:::start is made of the tracepoint
// the running kernel has: block_io_start from Linux 6.5 on, found by
// its BTF type, else block_rq_issue.
func TestLiveIOStartSite(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	cfg := btfTypes(t)
	c, err := Live(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{"io", "", "", "start"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("Match(io:::start) = %v, %v", ps, err)
	}
	want := "block:block_rq_issue"
	if events := tracefsEvents(); events != "" {
		if _, err := os.Stat(filepath.Join(events, "block", "block_io_start")); err == nil {
			want = "block:block_io_start"
		}
	} else {
		t.Skip("tracefs is not mounted: which tracepoints the kernel has is not known")
	}
	if got := ps[0].Detail.(*SDT).Sites; len(got) != 1 || got[0].String() != want {
		t.Errorf("io:::start's sites %v, want %s", got, want)
	}
}
