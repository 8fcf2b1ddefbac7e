package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// sdtTestTypes are the kernel types the SDT specs name, as the test's
// kernel has them.
type sdtTestTypes struct{}

func (sdtTestTypes) LookupFunc(string) (*types.Func, []string, error) { return nil, nil, nil }

func (sdtTestTypes) LookupType(name string) (types.Type, error) {
	switch name {
	case "int":
		return types.IntType, nil
	case "u64":
		return &types.Typedef{Module: "vmlinux", Name: "u64", Type: types.ULongLong}, nil
	case "__sighandler_t":
		return &types.Typedef{Module: "vmlinux", Name: "__sighandler_t",
			Type: &types.Pointer{Elem: &types.Func{Result: types.Void{}, Params: []types.Type{types.IntType}}}}, nil
	case "struct task_struct", "struct kernel_siginfo", "struct rq", "struct request":
		return &types.Struct{Module: "vmlinux", Name: strings.TrimPrefix(name, "struct "), Incomplete: true}, nil
	}
	return nil, nil
}

// sdtCatalog returns a hermetic catalog of the proc, sched and io
// providers, with the types of sdtTestTypes, or none when typed is not
// set.
func sdtCatalog(typed bool) *Catalog {
	k := &kernel{load: func() ([]*funcList, error) { return nil, nil }}
	if typed {
		k.types = func(string) (KernelTypes, error) { return sdtTestTypes{}, nil }
	}
	return New(Dtrace(), newSDTProvider("proc", procSpecs, k), newSDTProvider("sched", schedSpecs, k),
		newSDTProvider("io", ioSpecs, k))
}

func TestSDTMatch(t *testing.T) {
	c := sdtCatalog(true)
	tests := []struct {
		desc Desc
		want []string
	}{
		{Desc{"proc", "", "", "create"}, []string{"proc:vmlinux::create"}},
		{Desc{"proc", "vmlinux", "", "create"}, []string{"proc:vmlinux::create"}},
		{Desc{"proc", "kernel", "", "create"}, nil},
		{Desc{"proc", "", "fork", "create"}, nil},
		{Desc{Name: "create"}, []string{"proc:vmlinux::create"}},
		{Desc{"sched", "", "", "on-cpu"}, []string{"sched:vmlinux::on-cpu"}},
		{Desc{Name: "on-cpu"}, []string{"sched:vmlinux::on-cpu"}},
		{Desc{"proc", "", "", "signal-send"}, []string{"proc:vmlinux::signal-send"}},
		{Desc{"proc", "", "", "signal-*"}, []string{"proc:vmlinux::signal-send", "proc:vmlinux::signal-discard",
			"proc:vmlinux::signal-clear", "proc:vmlinux::signal-handle"}},
		{Desc{"proc", "", "", "exec*"}, []string{"proc:vmlinux::exec", "proc:vmlinux::exec-failure", "proc:vmlinux::exec-success"}},
		{Desc{"sched", "", "", "*-cpu"}, []string{"sched:vmlinux::off-cpu", "sched:vmlinux::on-cpu", "sched:vmlinux::remain-cpu"}},
		{Desc{"io", "", "", ""}, []string{"io:vmlinux::start", "io:vmlinux::done", "io:vmlinux::wait-start", "io:vmlinux::wait-done"}},
		// start is both proc's and io's.
		{Desc{Name: "start"}, []string{"proc:vmlinux::start", "io:vmlinux::start"}},
		{Desc{"sched", "", "", "schedctl-yield"}, nil},
		{Desc{"proc", "", "", "fault"}, nil},
		{Desc{"pro?", "", "", "exit"}, []string{"proc:vmlinux::exit"}},
	}
	for _, tt := range tests {
		ps, err := c.Match(tt.desc)
		if err != nil {
			t.Errorf("Match(%v): %v", tt.desc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(ps)); diff != "" {
			t.Errorf("Match(%v) (-want +got):\n%s", tt.desc, diff)
		}
	}
	for _, pv := range []string{"proc", "sched", "io"} {
		ps, _ := c.Match(Desc{Provider: pv})
		for _, p := range ps {
			if _, ok := p.Detail.(*SDT); !ok {
				t.Errorf("%v: Detail %T, want *SDT", p, p.Detail)
			}
		}
	}
}

// typeStrings returns the types as C names, "<nil>" for a nil one.
func typeStrings(ts []types.Type) []string {
	var s []string
	for _, t := range ts {
		if t == nil {
			s = append(s, "<nil>")
			continue
		}
		s = append(s, t.String())
	}
	return s
}

func TestSDTInfo(t *testing.T) {
	c := sdtCatalog(true)
	tests := []struct {
		desc        Desc
		matches     int
		unstable    bool
		args, xargs []string
	}{
		{Desc{"proc", "", "", "create"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "u64"},
			[]string{"psinfo_t *", "psinfo_t *", "int"}},
		{Desc{"proc", "", "", "exec"}, 1, false, []string{"string"}, nil},
		{Desc{"proc", "", "", "exec-failure"}, 1, false, []string{"int"}, nil},
		{Desc{"proc", "", "", "exec-success"}, 1, false, nil, nil},
		{Desc{"proc", "", "", "exit"}, 1, false, []string{"int"}, nil},
		{Desc{"proc", "", "", "lwp-create"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *"}, []string{"lwpsinfo_t *", "psinfo_t *"}},
		{Desc{"proc", "", "", "lwp-start"}, 1, false, nil, nil},
		{Desc{"proc", "", "", "signal-send"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "int"}, []string{"lwpsinfo_t *", "psinfo_t *", ""}},
		{Desc{"proc", "", "", "signal-discard"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "int"}, []string{"lwpsinfo_t *", "psinfo_t *", ""}},
		{Desc{"proc", "", "", "signal-clear"}, 1, false, []string{"int"}, nil},
		{Desc{"proc", "", "", "signal-handle"}, 1, false,
			[]string{"int", "struct kernel_siginfo *", "__sighandler_t"}, []string{"", "siginfo_t *", ""}},
		{Desc{"sched", "", "", "on-cpu"}, 1, false, nil, nil},
		{Desc{"sched", "", "", "off-cpu"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *"}, []string{"lwpsinfo_t *", "psinfo_t *"}},
		{Desc{"sched", "", "", "enqueue"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "struct rq *", "int"},
			[]string{"lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *", ""}},
		{Desc{"sched", "", "", "dequeue"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "struct rq *"},
			[]string{"lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *"}},
		{Desc{"sched", "", "", "change-pri"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *", "int"}, []string{"lwpsinfo_t *", "psinfo_t *", ""}},
		{Desc{"sched", "", "", "wakeup"}, 1, false,
			[]string{"struct task_struct *", "struct task_struct *"}, []string{"lwpsinfo_t *", "psinfo_t *"}},
		{Desc{"io", "", "", "done"}, 1, false,
			[]string{"struct request *", "struct request *", "struct request *"}, []string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}},
		// Several probes: Evolving arguments, but the name, Evolving,
		// is not given.
		{Desc{"proc", "", "", ""}, 2, true, nil, nil},
		{Desc{"proc", "", "", "signal-*"}, 2, true, nil, nil},
		// Several probes with the name given, whose arguments disagree:
		// proc:::start has none, io:::start three.
		{Desc{Name: "start"}, 2, true, nil, nil},
		{Desc{"proc", "", "", "nosuch"}, 0, false, nil, nil},
	}
	for _, tt := range tests {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Errorf("Info(%v): %v", tt.desc, err)
			continue
		}
		got := typeStrings(info.Args)
		if info.Matches != tt.matches || info.Unstable != tt.unstable ||
			!cmp.Equal(got, tt.args) || !cmp.Equal(info.XArgs, tt.xargs) {
			t.Errorf("Info(%v) = %d matches, unstable %v, args %q, xargs %q; want %d, %v, %q, %q",
				tt.desc, info.Matches, info.Unstable, got, info.XArgs, tt.matches, tt.unstable, tt.args, tt.xargs)
		}
	}

	// Without kernel types, args[] has no types, and XArgs are not given.
	info, err := sdtCatalog(false).Info(Desc{"proc", "", "", "create"})
	if err != nil || info.Matches != 1 || info.Args != nil || info.XArgs != nil {
		t.Errorf("untyped Info(proc:::create) = %+v, %v; want one match, no args", info, err)
	}
}

func TestSDTMatcher(t *testing.T) {
	m := Matcher{Catalog: sdtCatalog(true)}
	pm, err := m.Match(&ast.ProbeDesc{Provider: "proc", Name: "signal-send"})
	if err != nil {
		t.Fatal(err)
	}
	if pm.Count != 1 || !pm.Typed || len(pm.Args) != 3 ||
		!cmp.Equal(pm.XArgs, []string{"lwpsinfo_t *", "psinfo_t *", ""}) {
		t.Errorf("Match(proc:::signal-send) = %+v", pm)
	}
	pm, err = m.Match(&ast.ProbeDesc{Provider: "sched"})
	if err != nil || pm.Count != 2 || pm.Typed || pm.XArgs != nil {
		t.Errorf("Match(sched:::) = %+v, %v; want 2 untyped", pm, err)
	}
}

// argRef finds the site arguments argN an expression uses.
var argRef = regexp.MustCompile(`\barg([0-9])\b`)

// TestSDTSpecs checks the specs against themselves: each site gives
// every argument, names one kind of event, and its expressions are D.
func TestSDTSpecs(t *testing.T) {
	for _, pv := range []struct {
		name  string
		specs []sdtSpec
	}{{"proc", procSpecs}, {"sched", schedSpecs}, {"io", ioSpecs}, {"ip", ipSpecs}, {"tcp", tcpSpecs}, {"udp", udpSpecs}, {"lockstat", lockstatSpecs}} {
		seen := map[string]bool{}
		for _, spec := range pv.specs {
			name := pv.name + ":::" + spec.name
			if seen[spec.name] {
				t.Errorf("%s listed twice", name)
			}
			seen[spec.name] = true
			if len(spec.sites) == 0 {
				t.Errorf("%s has no site", name)
			}
			for _, a := range spec.args {
				if a.native == "" || a.native == a.xlate {
					t.Errorf("%s: argument types %+v: want a native type, and a translated one only if it differs", name, a)
				}
			}
			for _, s := range append(spec.sites[:len(spec.sites):len(spec.sites)], spec.older...) {
				if (s.Function == "") == (s.Event == "") || s.Function != "" && s.System != "" {
					t.Errorf("%s: site %+v: want an event or a function", name, s)
				}
				if len(s.Args) != len(spec.args) {
					t.Errorf("%s: site %v gives %d arguments, want %d", name, &s, len(s.Args), len(spec.args))
				}
				src := "BEGIN\n"
				if s.Cond != "" {
					src += "/" + s.Cond + "/\n"
				}
				src += "{\n"
				for i, a := range s.Args {
					src += fmt.Sprintf("\ta%d = %s;\n", i, a)
				}
				src += "}\n"
				if _, err := parser.ParseFile(name, []byte(src), nil); err != nil {
					t.Errorf("%s: site %v: %v\n%s", name, &s, err, src)
				}
			}
		}
	}
}

// TestSDTCorpus matches the proc, sched and io descriptions of the
// DTrace test suite's scripts: each one names a probe. The shell
// scripts' descriptions are listed by hand.
func TestSDTCorpus(t *testing.T) {
	dir := corpusDir(t)
	c := sdtCatalog(true)
	var files []string
	for _, pat := range []string{"proc/tst.*.d", "sched/tst.*.d", "pid/tst.*fork.d", "io/tst.*.d"} {
		fs, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, fs...)
	}
	if len(files) < 6 {
		t.Fatalf("found only %v", files)
	}
	n := 0
	for _, f := range files {
		for _, d := range corpusDescs(t, f) {
			if d.Provider != "proc" && d.Provider != "sched" && d.Provider != "io" {
				continue
			}
			n++
			if info, err := c.Info(d); err != nil || info.Matches != 1 || info.Unstable {
				t.Errorf("%s: %v: %+v, %v; want one probe, typed", filepath.Base(f), d, info, err)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d proc, sched and io descriptions in %v", n, files)
	}
	// The descriptions of the shell scripts, proc/tst.*.ksh and others.
	ksh, _ := filepath.Glob(filepath.Join(dir, "*", "*.ksh"))
	re := regexp.MustCompile(`\b(proc|sched|io):::([a-z-]+)`)
	for _, f := range ksh {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			d := Desc{Provider: m[1], Name: m[2]}
			if cnt, err := c.Count(d); err != nil || cnt != 1 {
				t.Errorf("%s: %v matches %d probes, %v", filepath.Base(f), d, cnt, err)
			}
		}
	}
}

// siteArgs returns, for each argument of a site that is one of the
// site's own arguments with at most a cast, its number; -1 for the
// others.
func siteArgs(s *SDTSite) []int {
	var ns []int
	re := regexp.MustCompile(`^(\([^()]*\))?arg([0-9])$`)
	for _, a := range s.Args {
		m := re.FindStringSubmatch(a)
		if m == nil {
			ns = append(ns, -1)
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ns = append(ns, n)
	}
	return ns
}

func TestSiteArgs(t *testing.T) {
	s := &SDTSite{Args: []string{"arg1", "(struct task_struct *)arg2", "curthread", "-(int)arg0", "copyinstr(arg0)"}}
	if got, want := siteArgs(s), []int{1, 2, -1, -1, -1}; !cmp.Equal(got, want) {
		t.Errorf("siteArgs = %v, want %v", got, want)
	}
	if !argRef.MatchString("(arg2 & 0x10000) != 0") || argRef.MatchString("curthread->nvcsw") {
		t.Error("argRef")
	}
}

// ioTypes are sdtTestTypes on a kernel with the tracepoint block_io_start.
type ioTypes struct{ sdtTestTypes }

func (t ioTypes) LookupType(name string) (types.Type, error) {
	if name == "btf_trace_block_io_start" {
		return &types.Typedef{Module: "vmlinux", Name: name, Type: &types.Pointer{Elem: &types.Func{Result: types.Void{}}}}, nil
	}
	return t.sdtTestTypes.LookupType(name)
}

// tickTypes are the types of a kernel from 6.10 on, whose sched_tick
// was scheduler_tick before.
type tickTypes struct{ sdtTestTypes }

func (tickTypes) LookupFunc(name string) (*types.Func, []string, error) {
	if name == "sched_tick" {
		return &types.Func{Result: types.Void{}}, nil, nil
	}
	return nil, nil, nil
}

// TestSDTOlder checks that io:::start is made of block_io_start where
// the kernel has it, or where its types are not known, and of
// block_rq_issue on a kernel before it; sched:::tick of sched_tick, or
// of scheduler_tick before 6.10.
func TestSDTOlder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		types KernelTypes
		prov  string
		specs []sdtSpec
		probe string
		want  string
	}{
		{"6.5 on", ioTypes{}, "io", ioSpecs, "start", "block:block_io_start"},
		{"before 6.5", sdtTestTypes{}, "io", ioSpecs, "start", "block:block_rq_issue"},
		{"no types", nil, "io", ioSpecs, "start", "block:block_io_start"},
		{"6.10 on", tickTypes{}, "sched", schedSpecs, "tick", "sched_tick()"},
		{"before 6.10", sdtTestTypes{}, "sched", schedSpecs, "tick", "scheduler_tick()"},
		{"no types", nil, "sched", schedSpecs, "tick", "sched_tick()"},
	} {
		k := &kernel{load: func() ([]*funcList, error) { return nil, nil }}
		if tt.types != nil {
			k.types = func(string) (KernelTypes, error) { return tt.types, nil }
		}
		ps, err := New(newSDTProvider(tt.prov, tt.specs, k)).Match(Desc{tt.prov, "", "", tt.probe})
		if err != nil || len(ps) != 1 {
			t.Fatalf("%s: Match(%s:::%s) = %v, %v", tt.name, tt.prov, tt.probe, ps, err)
		}
		var got []string
		for _, s := range ps[0].Detail.(*SDT).Sites {
			got = append(got, s.String())
		}
		if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
			t.Errorf("%s: %s:::%s's sites (-want +got):\n%s", tt.name, tt.prov, tt.probe, diff)
		}
	}
}
