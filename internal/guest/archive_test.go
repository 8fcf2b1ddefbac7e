package guest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		x, y string
		want int
	}{
		{"6.1.192-2", "6.1.192-2", 0},
		{"6.1.192-3", "6.1.192-2", 1},
		{"6.1.176-1", "6.1.192-2", -1},
		{"6.1.9-1", "6.1.10-1", -1},
		{"6.1.010-1", "6.1.10-1", 0},
		{"1:6.1.0-1", "6.1.192-2", 1},
		{"6.1.192~rc1-1", "6.1.192-1", -1},
		{"6.1.192-1~bpo12+1", "6.1.192-1", -1},
		{"6.1.192-1+deb12u1", "6.1.192-1", 1},
		{"6.1.192a-1", "6.1.192+-1", -1},
		{"6.1.192", "6.1.192-0", 0},
		{"6.12.48-1", "6.1.192-2", 1},
	} {
		if got := CompareVersions(tc.x, tc.y); sign(got) != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.x, tc.y, got, tc.want)
		}
		if got := CompareVersions(tc.y, tc.x); sign(got) != -tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.y, tc.x, got, -tc.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// madison is apt-cache madison's answer on a Debian 12 machine on
// 2026-11-28: the signed image of 6.1.0-57 not published yet, kbuild at
// the newest version of each suite only, so not at 6.1.192-2, whose
// headers and images are still there.
const madison = ` linux-image-6.1.0-50-amd64 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
 linux-image-6.1.0-50-amd64 |  6.1.176-1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-50-amd64-dbg |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
linux-image-6.1.0-50-amd64-unsigned |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
linux-headers-6.1.0-50-amd64 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
linux-headers-6.1.0-50-common |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
linux-image-6.1.0-56-amd64 |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-56-amd64-dbg |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-56-amd64-unsigned |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-headers-6.1.0-56-amd64 |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-headers-6.1.0-56-common |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-57-amd64-dbg |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-57-amd64-unsigned |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-headers-6.1.0-57-amd64 |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-headers-6.1.0-57-common |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
  linux-kbuild-6.1 |  6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
  linux-kbuild-6.1 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
     linux |  6.1.176-1 | http://deb.debian.org/debian bookworm/main Sources
`

func TestParseMadison(t *testing.T) {
	a := parseMadison([]byte(madison))
	if diff := cmp.Diff([]string{"6.1.192-3", "6.1.176-1"}, a["linux-kbuild-6.1"]); diff != "" {
		t.Errorf("linux-kbuild-6.1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"6.1.176-1"}, a["linux-image-6.1.0-50-amd64"]); diff != "" {
		t.Errorf("a version in two suites (-want +got):\n%s", diff)
	}
	if _, ok := a["linux"]; ok {
		t.Error("a source package read as a binary one")
	}
	if len(a) != 15 {
		t.Errorf("%d packages, want 15", len(a))
	}
}

func TestChoose(t *testing.T) {
	a := parseMadison([]byte(madison))
	k57 := Kernel{Release: "6.1.0-57-amd64", Version: "6.1.192-3", Unsigned: true}
	k56 := Debian12
	k50 := Kernel{Release: "6.1.0-50-amd64", Version: "6.1.176-1"}
	old := Kernel{Release: "6.1.0-41-amd64", Version: "6.1.158-1"}
	for _, tc := range []struct {
		name    string
		archive Archive
		cached  []Kernel
		needs   Needs
		pins    []Kernel
		want    []Kernel
		err     string
	}{
		{
			// 6.1.192-2's kbuild is gone: the module test's skip.
			name: "headers", archive: a, needs: Needs{Headers: true},
			want: []Kernel{k57, k50},
		},
		{
			name: "debug", archive: a, needs: Needs{Debug: true},
			want: []Kernel{k57, k56, k50},
		},
		{
			name: "pinned", archive: a, needs: Needs{Debug: true}, pins: []Kernel{Debian12},
			want: []Kernel{Debian12},
		},
		{
			name: "pinned in a list", archive: a, needs: Needs{Debug: true}, pins: []Kernel{old, Debian12, k50},
			want: []Kernel{Debian12, k50},
		},
		{
			name: "pinned without kbuild", archive: a, needs: Needs{Headers: true}, pins: []Kernel{Debian12},
			err: "no kernel has all its packages in the archive or the cache: 6.1.0-56-amd64 6.1.192-2 lacks linux-kbuild-6.1=6.1.192-2",
		},
		{
			// The archive has moved on; the cache still has the
			// pinned kernel.
			name: "pinned in the cache", archive: Archive{}, cached: []Kernel{Debian12}, needs: Needs{Debug: true}, pins: []Kernel{Debian12},
			want: []Kernel{Debian12},
		},
		{
			name: "pinned gone", archive: Archive{}, needs: Needs{Debug: true}, pins: []Kernel{Debian12},
			err: "no kernel has all its packages in the archive or the cache: 6.1.0-56-amd64 6.1.192-2 lacks linux-image-6.1.0-56-amd64=6.1.192-2, linux-image-6.1.0-56-amd64-dbg=6.1.192-2",
		},
		{
			name: "cached and dropped", archive: a, cached: []Kernel{old}, needs: Needs{Headers: true},
			want: []Kernel{k57, k50, old},
		},
		{
			name: "cached newest", archive: a, cached: []Kernel{{Release: "6.1.0-58-amd64", Version: "6.1.193-1"}}, needs: Needs{Headers: true},
			want: []Kernel{{Release: "6.1.0-58-amd64", Version: "6.1.193-1"}, k57, k50},
		},
		{
			name: "nothing", archive: Archive{}, needs: Needs{Headers: true},
			err: "no kernel in the archive or the cache",
		},
		{
			name: "none whole", archive: Archive{
				"linux-image-6.1.0-56-amd64": {"6.1.192-2"},
				"linux-image-6.1.0-55-amd64": {"6.1.192-1"},
			}, needs: Needs{Headers: true},
			err: "no kernel has all its packages in the archive or the cache: " +
				"6.1.0-56-amd64 6.1.192-2 lacks linux-headers-6.1.0-56-amd64=6.1.192-2, linux-headers-6.1.0-56-common=6.1.192-2, linux-kbuild-6.1=6.1.192-2; " +
				"6.1.0-55-amd64 6.1.192-1 lacks linux-headers-6.1.0-55-amd64=6.1.192-1, linux-headers-6.1.0-55-common=6.1.192-1, linux-kbuild-6.1=6.1.192-1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Choose(tc.archive, tc.cached, tc.needs, tc.pins...)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCached fills a cache as the fetches do and checks which kernels
// it holds whole for each need.
func TestCached(t *testing.T) {
	cache := t.TempDir()
	k := Kernel{Release: "6.1.0-50-amd64", Version: "6.1.176-1"}
	dir := filepath.Join(cache, k.Release+"_"+k.Version)
	touch := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch(filepath.Join(dir, "vmlinuz-"+k.Release))
	// Another flavour, an interrupted fetch, and a stray file.
	touch(filepath.Join(cache, "6.1.0-50-cloud-amd64_6.1.176-1", "vmlinuz-6.1.0-50-cloud-amd64"))
	touch(filepath.Join(cache, "6.1.0-50-cloud-amd64_6.1.176-1", "config-6.1.0-50-cloud-amd64"))
	touch(filepath.Join(dir, "fetch-123", "x.deb"))
	touch(filepath.Join(cache, "notes"))

	check := func(needs Needs, want []Kernel) {
		t.Helper()
		if diff := cmp.Diff(want, Cached(cache, "6.1", "amd64", needs)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", needs, diff)
		}
	}
	check(Needs{}, nil) // no config yet
	touch(filepath.Join(dir, "config-"+k.Release))
	check(Needs{}, []Kernel{k})
	check(Needs{Debug: true}, nil)
	check(Needs{Headers: true}, nil)
	touch(debugPath(cache, k))
	check(Needs{Debug: true}, []Kernel{k})
	touch(filepath.Join(headersDir(cache, k), "Makefile"))
	check(Needs{Debug: true, Headers: true}, []Kernel{k})
	if got := Cached(filepath.Join(cache, "none"), "6.1", "amd64", Needs{}); got != nil {
		t.Errorf("a missing cache holds %v", got)
	}
}

func TestOffline(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{"apt-get: exit status 100: W: Failed to fetch http://deb.debian.org/debian/pool/main/l/linux/linux-kbuild-6.1_6.1.192-2_amd64.deb  Temporary failure resolving 'deb.debian.org'", true},
		{"apt-get: exit status 100: E: Failed to fetch http://deb.debian.org/debian-security/pool/updates/main/l/linux/x.deb  Could not connect to deb.debian.org:80 (151.101.2.132), connection timed out", true},
		{"apt-get: exit status 100: E: Failed to fetch http://deb.debian.org/debian-security/pool/updates/main/l/linux/x.deb  404  Not Found [IP: 151.101.2.132 80]", false},
		{"apt-get: exit status 100: E: Version '6.1.192-2' for 'linux-kbuild-6.1' was not found", false},
	} {
		e := &FetchError{Kernel: Debian12, Err: errors.New(tc.msg)}
		if got := e.Offline(); got != tc.want {
			t.Errorf("Offline() = %v for %q", got, tc.msg)
		}
	}
}

// TestQueryArchive asks this machine's apt: every image it lists is of
// the series and flavour asked for, and kbuild is among the packages.
func TestQueryArchive(t *testing.T) {
	if _, err := exec.LookPath("apt-cache"); err != nil {
		t.Skip("apt-cache not found: not a Debian machine")
	}
	a, err := QueryArchive(context.Background(), "6.1", "amd64")
	if errors.Is(err, ErrNoApt) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	images := 0
	for name := range a {
		rest, ok := strings.CutPrefix(name, "linux-image-6.1.")
		if !ok {
			continue
		}
		images++
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, "-dbg"), "-unsigned")
		if !strings.HasSuffix(rest, "-amd64") || strings.Contains(rest, "cloud") || strings.Contains(rest, "rt-") {
			t.Errorf("%s is not of the amd64 flavour", name)
		}
	}
	if images == 0 || len(a["linux-kbuild-6.1"]) == 0 {
		t.Errorf("no images or no kbuild in %v", a)
	}
	ks, err := Choose(a, nil, Needs{Headers: true})
	t.Logf("kernels with headers, best first: %v (%v)", ks, err)
}
