package probe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

func TestOffline(t *testing.T) {
	dir := t.TempDir()
	image := gcctest.Build(t, dir, "vmlinux", testProgram)
	mod := gcctest.Build(t, dir, "my-mod.ko", testModule, "-c")
	c, err := Offline(image, []string{mod}, Config{Types: func(module string) (KernelTypes, error) {
		if module != KernelModule {
			return nil, nil
		}
		return testTypes{"work": {Result: types.IntType, Params: []types.Type{types.IntType}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc Desc
		want []string
	}{
		{Desc{"fbt", "", "work", ""}, []string{"fbt:vmlinux:work:entry", "fbt:vmlinux:work:return"}},
		{Desc{"fbt", "", "mod_*", "entry"}, []string{"fbt:my_mod:mod_init:entry", "fbt:my_mod:mod_exit:entry"}},
		{Desc{"fbt", "my_mod", "work", ""}, nil},
		{Desc{"kinst", "", "work", "0"}, []string{"kinst:vmlinux:work:0"}},
		{Desc{"kinst", "", "work", "4096"}, nil}, // past the function's end
		{Desc{"syscall", "", "", ""}, nil},
		{Desc{Name: "BEGIN"}, []string{"dtrace:::BEGIN"}},
		{Desc{Provider: "pid1"}, nil},
	}
	for _, tt := range tests {
		got, err := c.Match(tt.desc)
		if tt.desc.Provider == "pid1" {
			if pe, ok := err.(*procError); !ok || pe.Tag != "D_PROC_NODEV" {
				t.Errorf("Match(%v) error = %v, want D_PROC_NODEV", tt.desc, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Match(%v): %v", tt.desc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("Match(%v) (-want +got):\n%s", tt.desc, diff)
		}
	}

	// kinst::work: lists every instruction of work, as decoded.
	ps, err := c.Match(Desc{"kinst", "", "work", ""})
	if err != nil {
		t.Fatal(err)
	}
	site := ps[0].Detail.(*KernelSite)
	l, _ := c.Provider("kinst").(*kinstProvider).k.module(KernelModule)
	i, _ := l.lookup("work")
	addr, code, err := elfCode(l, i)
	if err != nil || addr != site.Addr || uint64(len(code)) != site.Size {
		t.Fatalf("code of work: %#x, %d bytes, %v; site %+v", addr, len(code), err, site)
	}
	insts, err := amd64.Decode(code, addr)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, in := range insts {
		if in.Op != amd64.Data {
			want = append(want, "kinst:vmlinux:work:"+itoa(in.Addr-addr))
		}
	}
	if diff := cmp.Diff(want, names(ps)); diff != "" || len(ps) < 2 {
		t.Errorf("kinst::work: (-want +got):\n%s", diff)
	}

	info, err := c.Info(Desc{"fbt", "", "work", "return"})
	if err != nil || len(info.Args) != 2 || info.Args[1] != types.IntType {
		t.Errorf("Info(fbt::work:return) = %+v, %v", info, err)
	}
	if info, err := c.Info(Desc{"fbt", "", "mod_init", "entry"}); err != nil || info.Matches != 1 || info.Args != nil {
		t.Errorf("Info(fbt::mod_init:entry) = %+v, %v; want one probe, no types", info, err)
	}
}

func TestOfflineErrors(t *testing.T) {
	if _, err := Offline("/nonexistent/vmlinux", nil, Config{}); err == nil || !strings.Contains(err.Error(), "/nonexistent/vmlinux") {
		t.Errorf("Offline(/nonexistent/vmlinux) error = %v", err)
	}
	dir := t.TempDir()
	image := gcctest.Build(t, dir, "vmlinux", testProgram)
	c, err := Offline(image, []string{dir + "/missing.ko"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Match(Desc{"fbt", "", "work", "entry"}); err == nil || !strings.Contains(err.Error(), "missing.ko") {
		t.Errorf("Match with a missing module: error = %v", err)
	}
	// The providers that need no kernel still answer.
	if n, err := c.Count(Desc{Name: "tick-1"}); n != 1 || err != nil {
		t.Errorf("Count(:::tick-1) = %d, %v", n, err)
	}
}
