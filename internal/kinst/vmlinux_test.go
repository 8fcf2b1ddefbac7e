package kinst_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/guest"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/kinst"
)

// debianVmlinux is Debian 12's 6.1.0-56 vmlinux with DWARF: the
// KDTRACE_VMLINUX environment variable, or where the guest test's
// FetchDebug caches it.
func debianVmlinux(t *testing.T) string {
	p, ok := guest.CachedDebug()
	if !ok {
		t.Skip("no Debian 6.1 vmlinux with DWARF: set KDTRACE_VMLINUX, or run the guest test once")
	}
	return p
}

// TestDebianVmlinux checks the sites issue 13 found wrong on Debian's
// 6.1.0-56 vmlinux (build-id eb4fbcd0…).
func TestDebianVmlinux(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a 630 MB vmlinux")
	}
	set, err := debuginfo.Open(debianVmlinux(t), nil, debuginfo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if id := set.Images()[0].BuildID; id != "eb4fbcd037e7253717950bf2b93bd5566f47c56f" {
		t.Skipf("not Debian's 6.1.0-56 vmlinux: build-id %s", id)
	}
	var warnings []string
	r := &kinst.Resolver{Set: set, Warn: func(err error) { warnings = append(warnings, err.Error()) }}

	t.Run("do_sendfile return site", func(t *testing.T) {
		// do_sendfile's copy of fsnotify_access ([+551, +644) and
		// [+997, +1054)) is left at +644 on every path; the call to
		// __stack_chk_fail at +1170, taken to fall through, made a
		// path from +644 back into it, and the copy sits in a loop
		// entered in its middle, which has no edge whose target
		// dominates its source.
		entry, err := r.Sites("fsnotify_access", false)
		if err != nil {
			t.Fatal(err)
		}
		sites, err := r.Sites("fsnotify_access", true)
		if err != nil {
			t.Fatal(err)
		}
		if want := (sugar.Site{Func: "do_sendfile", Offset: 551}); !slices.ContainsFunc(entry.Sites, want.Same) {
			t.Errorf("no entry site %s:%d in %v", want.Func, want.Offset, entry.Sites)
		}
		for _, want := range []sugar.Site{{Func: "do_sendfile", Offset: 644}, {Func: "__kernel_read", Offset: 405}} {
			if !slices.ContainsFunc(sites.Sites, want.Same) {
				t.Errorf("no return site %s:%d in %v", want.Func, want.Offset, sites.Sites)
			}
		}
		// Every copy with an entry has an exit in the same caller.
		callers := map[string]bool{}
		for _, x := range sites.Sites {
			callers[x.Func] = true
		}
		for _, x := range entry.Sites {
			if !callers[x.Func] {
				t.Errorf("the copy in %s (entry at +%d) has no return site there", x.Func, x.Offset)
			}
		}
	})
	t.Run("guarded copies", func(t *testing.T) {
		// The copies with a return site other paths reach: their
		// entries, the guards' flags, and what -x kinstcompat makes of
		// them (no guard).
		compat := &kinst.Resolver{Set: set, Compat: true}
		for _, tt := range []struct {
			fn      string
			copies  int
			guarded []string // the guarded copies' entries
		}{
			// vfs_iocb_iter_read calls fsnotify_access on two paths
			// the compiler made of one call (the early return of an
			// empty read, +72, and the read's, +150), as does
			// vfs_copy_file_range (+410, +704): DW_AT_entry_pc names
			// only the first, GCC's entry markers both.
			{"fsnotify_access", 11, []string{"do_iter_read:62", "io_req_io_end:122", "vfs_copy_file_range:410", "vfs_copy_file_range:704", "vfs_iocb_iter_read:150", "vfs_iocb_iter_read:72"}},
			{"add_rchar", 9, []string{"__ia32_sys_preadv:192", "__kernel_read:414", "__x64_compat_sys_preadv:217", "__x64_sys_preadv:202", "do_preadv:173", "do_readv:171", "vfs_read:259"}},
		} {
			entry, err := r.Sites(tt.fn, false)
			if err != nil {
				t.Fatal(err)
			}
			ret, err := r.Sites(tt.fn, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(entry.Sites) != tt.copies {
				t.Errorf("%s: %d entry sites, want %d", tt.fn, len(entry.Sites), tt.copies)
			}
			var got []string
			for _, g := range ret.Guards {
				got = append(got, fmt.Sprintf("%s:%d", g.Entry.Func, g.Entry.Offset))
				if !slices.ContainsFunc(entry.Sites, g.Entry.Same) {
					t.Errorf("%s: guard entry %+v is not an entry site", tt.fn, g.Entry)
				}
				for _, x := range g.Shared {
					if !slices.ContainsFunc(g.Exits, x.Same) {
						t.Errorf("%s: shared site %+v is not one of the copy's exits %v", tt.fn, x, g.Exits)
					}
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.guarded, got); diff != "" {
				t.Errorf("%s: guarded copies (-want +got):\n%s", tt.fn, diff)
			}
			c, err := compat.Sites(tt.fn, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Guards) != 0 {
				t.Errorf("%s: -x kinstcompat makes %d guards, want none", tt.fn, len(c.Guards))
			}
		}
	})
	t.Run("nameless site", func(t *testing.T) {
		warnings = nil
		sites, err := r.Sites("native_pmd_val", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sites.Sites {
			if s.Func == "" {
				t.Errorf("a site without a function: %+v", s)
			}
		}
		want := "inline copy of native_pmd_val at 0xffffffff830b230a in kernel left out: no function symbol holds it, in .init.text, which the kernel frees after boot"
		if !slices.Contains(warnings, want) {
			t.Errorf("warnings %q, want %q", warnings, want)
		}
	})
	t.Run("ftrace call", func(t *testing.T) {
		// The vmlinux holds call __fentry__ at +0, the NOP of the live
		// text.
		err := r.CheckOffset("vfs_read", 4)
		if want := "vfs_read: offset 4 is inside the 5-byte ftrace NOP (nearest boundaries: 0 and 5)"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	})
}
