package kinst_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kdtrace/kdtrace/debuginfo"
	"github.com/kdtrace/kdtrace/dlang/sugar"
	"github.com/kdtrace/kdtrace/kinst"
)

// debianVmlinux is the Debian 12 kernel image with DWARF that the guest
// test (internal/guest) downloads into the user's cache.
const debianVmlinux = "kdtrace/guest/6.1.0-56-amd64_6.1.192-2/vmlinux-6.1.0-56-amd64"

// TestSendfileReturn checks kinst::fsnotify_access:return on Debian's
// 6.1 kernel: its copy in do_sendfile sits in a loop entered in its
// middle, which has no edge whose target dominates its source, and got
// no return site while the other copies of the same shape did
// (__kernel_read:405). Skipped without the image.
func TestSendfileReturn(t *testing.T) {
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	vmlinux := filepath.Join(dir, debianVmlinux)
	if _, err := os.Stat(vmlinux); err != nil {
		t.Skipf("no Debian 6.1 vmlinux (go test ./internal/guest fetches it): %v", err)
	}
	set, err := debuginfo.Open(vmlinux, nil, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	r := &kinst.Resolver{Set: set}
	entry, err := r.Sites("fsnotify_access", false)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := r.Sites("fsnotify_access", true)
	if err != nil {
		t.Fatal(err)
	}
	has := func(s *sugar.Sites, fn string, off uint64) bool {
		for _, x := range s.Sites {
			if x.Func == fn && x.Offset == off {
				return true
			}
		}
		return false
	}
	if !has(entry, "do_sendfile", 551) || !has(ret, "do_sendfile", 644) || !has(ret, "__kernel_read", 405) {
		t.Errorf("entry sites %v, return sites %v: want do_sendfile:551 among the first and do_sendfile:644 and __kernel_read:405 among the others", entry.Sites, ret.Sites)
	}
	// Every copy with an entry has an exit in the same caller.
	callers := map[string]bool{}
	for _, x := range ret.Sites {
		callers[x.Func] = true
	}
	for _, x := range entry.Sites {
		if !callers[x.Func] {
			t.Errorf("the copy in %s (entry at +%d) has no return site there", x.Func, x.Offset)
		}
	}
}
