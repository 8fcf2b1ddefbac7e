package debuginfod

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// elfWithID builds a small ELF object of the given build-id (hex) with
// gcc, and returns its bytes.
func elfWithID(t *testing.T, id string) []byte {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "f.c")
	if err := os.WriteFile(src, []byte("int f(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.so")
	if b, err := exec.Command(gcc, "-g", "-shared", "-o", out, src, "-Wl,--build-id=0x"+id).CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustHex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// transfers returns the ways to download that the tests of downloads
// run through: in the test's process, and by kdtrace-debuginfod, built
// for the test.
func transfers(t *testing.T) []struct {
	name string
	tr   Transfer
} {
	return []struct {
		name string
		tr   Transfer
	}{
		{"in-process", debuginfodtest.InProcess},
		{"helper", Helper(kdtracebin.BuildHelper(t, t.TempDir()))},
	}
}

// server serves files by build-id on loopback, counting requests.
type server struct {
	URL   string
	files map[string][]byte // by "<id>/<kind>"
	hits  atomic.Int32
	srv   *http.Server
}

func startServer(t *testing.T, files map[string][]byte) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{URL: "http://" + ln.Addr().String(), files: files}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		b, ok := s.files[strings.TrimPrefix(r.URL.Path, "/buildid/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Last-Modified", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Format(http.TimeFormat))
		w.Write(b)
	})}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// deadURL is a loopback URL where nothing listens.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// tree lists the cache's files under the build-id directories, with
// their sizes, leaving out the control files.
func tree(t *testing.T, cache string) []string {
	var out []string
	filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(cache, p)
		if !strings.Contains(rel, "/") {
			return nil
		}
		out = append(out, fmt.Sprintf("%s %d", rel, fi.Size()))
		return nil
	})
	sort.Strings(out)
	return out
}

func TestFind(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	const other = "fedcba9876543210fedcba9876543210fedcba98"
	good := elfWithID(t, id)
	wrong := elfWithID(t, other)
	tests := []struct {
		name    string
		servers func(t *testing.T) []string
		kind    Kind
		wantErr string   // "" for success
		tree    []string // the cache after
	}{
		{"found", func(t *testing.T) []string {
			return []string{startServer(t, map[string][]byte{id + "/debuginfo": good}).URL}
		}, Debuginfo, "", []string{fmt.Sprintf("%s/debuginfo %d", id, len(good))}},
		{"executable", func(t *testing.T) []string {
			return []string{startServer(t, map[string][]byte{id + "/executable": good}).URL + "/"}
		}, Executable, "", []string{fmt.Sprintf("%s/executable %d", id, len(good))}},
		{"second server", func(t *testing.T) []string {
			return []string{startServer(t, nil).URL, startServer(t, map[string][]byte{id + "/debuginfo": good}).URL}
		}, Debuginfo, "", []string{fmt.Sprintf("%s/debuginfo %d", id, len(good))}},
		{"not found", func(t *testing.T) []string {
			return []string{startServer(t, nil).URL}
		}, Debuginfo, "not found (404)", []string{id + "/debuginfo 0"}},
		{"wrong build-id", func(t *testing.T) []string {
			return []string{startServer(t, map[string][]byte{id + "/debuginfo": wrong}).URL}
		}, Debuginfo, "it sent a file of build-id " + other, nil},
		{"not ELF", func(t *testing.T) []string {
			return []string{startServer(t, map[string][]byte{id + "/debuginfo": []byte("<html>oops</html>")}).URL}
		}, Debuginfo, "the file it sent: bad magic number", nil},
		{"server down", func(t *testing.T) []string { return []string{deadURL(t)} },
			Debuginfo, "connection refused", nil},
		{"down, then found", func(t *testing.T) []string {
			return []string{deadURL(t), startServer(t, map[string][]byte{id + "/debuginfo": good}).URL}
		}, Debuginfo, "", []string{fmt.Sprintf("%s/debuginfo %d", id, len(good))}},
	}
	for _, tr := range transfers(t) {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				cache := filepath.Join(t.TempDir(), "cache")
				c := &Client{URLs: tt.servers(t), CachePath: cache, Timeout: time.Minute, Transfer: tr.tr}
				path, err := c.Find(context.Background(), mustHex(t, id), tt.kind)
				if tt.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if want := filepath.Join(cache, id, string(tt.kind)); path != want {
						t.Errorf("path %s, want %s", path, want)
					}
					got, _ := os.ReadFile(path)
					if !bytes.Equal(got, good) {
						t.Error("the cached file differs from the served one")
					}
					fi, _ := os.Stat(path)
					if fi.Mode().Perm() != 0o400 || fi.ModTime().Year() != 2020 {
						t.Errorf("cached file mode %v, time %v; want 0400, the server's 2020", fi.Mode(), fi.ModTime())
					}
				} else {
					var e *Error
					if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("error %v, want an *Error with %q", err, tt.wantErr)
					}
					for _, s := range c.URLs {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("error %q does not name server %s", err, s)
						}
					}
				}
				if diff := cmp.Diff(tt.tree, tree(t, cache)); diff != "" {
					t.Errorf("cache (-want +got):\n%s", diff)
				}
				fi, err := os.Stat(cache)
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("cache directory: %v, %v; want mode 0700", fi, err)
				}
				if _, err := os.Stat(filepath.Join(cache, intervalFile)); err != nil {
					t.Errorf("control file: %v", err)
				}
			})
		}
	}
}

// TestWarmAndMiss: a file found is found again with no server up; a
// miss is remembered for cache_miss_s without asking again, then asked
// again once that has passed.
func TestWarmAndMiss(t *testing.T) {
	const id = "00112233445566778899aabbccddeeff00112233"
	good := elfWithID(t, id)
	cache := filepath.Join(t.TempDir(), "cache")
	s := startServer(t, map[string][]byte{id + "/debuginfo": good})
	c := &Client{URLs: []string{s.URL}, CachePath: cache, Transfer: debuginfodtest.InProcess}
	if _, err := c.Find(context.Background(), mustHex(t, id), Debuginfo); err != nil {
		t.Fatal(err)
	}
	s.srv.Close()
	path, err := (&Client{URLs: []string{s.URL}, CachePath: cache, Transfer: debuginfodtest.InProcess}).Find(context.Background(), mustHex(t, id), Debuginfo)
	if err != nil {
		t.Fatalf("warm lookup with the server stopped: %v", err)
	}
	if path != filepath.Join(cache, id, "debuginfo") {
		t.Errorf("path %s", path)
	}

	const missing = "99887766554433221100ffeeddccbbaa99887766"
	s2 := startServer(t, nil)
	c2 := &Client{URLs: []string{s2.URL}, CachePath: cache, Transfer: debuginfodtest.InProcess}
	for i := range 3 {
		_, err := c2.Find(context.Background(), mustHex(t, missing), Debuginfo)
		var e *Error
		if !errors.As(err, &e) || !e.NotFound() || e.Miss != (i > 0) {
			t.Fatalf("lookup %d: %v (miss remembered: %v), want not found, remembered after the first", i, err, e != nil && e.Miss)
		}
	}
	if n := s2.hits.Load(); n != 1 {
		t.Errorf("server asked %d times, want once", n)
	}
	// Past cache_miss_s, the server is asked again.
	old := time.Now().Add(-defaultMiss - time.Minute)
	if err := os.Chtimes(filepath.Join(cache, missing, "debuginfo"), old, old); err != nil {
		t.Fatal(err)
	}
	s2.files = map[string][]byte{missing + "/debuginfo": elfWithID(t, missing)}
	if _, err := c2.Find(context.Background(), mustHex(t, missing), Debuginfo); err != nil {
		t.Fatalf("after cache_miss_s: %v", err)
	}
	if n := s2.hits.Load(); n != 2 {
		t.Errorf("server asked %d times, want twice", n)
	}
}

// TestInterrupted: a download cancelled midway leaves nothing in the
// cache, and the next lookup fetches the file whole.
func TestInterrupted(t *testing.T) {
	const id = "aabbccddeeff00112233445566778899aabbccdd"
	good := elfWithID(t, id)
	// Big enough that the first half fills the socket's buffers.
	body := append(good, make([]byte, 8<<20)...)
	for _, tr := range transfers(t) {
		t.Run(tr.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			started, release := make(chan struct{}, 1), make(chan struct{})
			var progress bytes.Buffer
			c := &Client{URLs: []string{debuginfodtest.SlowServer(t, body, started, release)}, CachePath: cache, Progress: &progress, Transfer: tr.tr}
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; time.Sleep(300 * time.Millisecond); cancel() }()
			_, err := c.Find(ctx, mustHex(t, id), Debuginfo)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want cancelled", err)
			}
			if got := tree(t, cache); len(got) != 0 {
				t.Errorf("cache after cancel: %v, want nothing", got)
			}
			if !strings.Contains(progress.String(), "debuginfod: "+c.URLs[0]) || !strings.Contains(progress.String(), "of 8.") {
				t.Errorf("progress %q shows no download of 8 MiB", progress.String())
			}
			close(release)
			path, err := c.Find(context.Background(), mustHex(t, id), Debuginfo)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
				t.Errorf("refetched file of %d bytes, want %d", len(got), len(body))
			}
		})
	}
}

// TestTimeout: a server that stops sending is given up after
// DEBUGINFOD_TIMEOUT, and the next server asked.
func TestTimeout(t *testing.T) {
	const id = "1111111111111111111111111111111111111111"
	good := elfWithID(t, id)
	body := append(good, make([]byte, 4<<20)...)
	for _, tr := range transfers(t) {
		t.Run(tr.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			started := make(chan struct{}, 1)
			stall := debuginfodtest.SlowServer(t, body, started, nil)
			fine := startServer(t, map[string][]byte{id + "/debuginfo": good})
			c := &Client{URLs: []string{stall, fine.URL}, CachePath: cache, Timeout: 500 * time.Millisecond, Transfer: tr.tr}
			path, err := c.Find(context.Background(), mustHex(t, id), Debuginfo)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, good) {
				t.Error("the file is not the second server's")
			}
			// The stalled one alone: the error says why.
			os.RemoveAll(filepath.Join(cache, id))
			c = &Client{URLs: []string{stall}, CachePath: cache, Timeout: 500 * time.Millisecond, Transfer: tr.tr}
			_, err = c.Find(context.Background(), mustHex(t, id), Debuginfo)
			if err == nil || !strings.Contains(err.Error(), "DEBUGINFOD_TIMEOUT") {
				t.Errorf("error %v, want one naming DEBUGINFOD_TIMEOUT", err)
			}
			if got := tree(t, cache); len(got) != 0 {
				t.Errorf("cache after timeout: %v", got)
			}
		})
	}
}

// TestTimeoutSlow: a download that takes longer than
// DEBUGINFOD_TIMEOUT in all, but brings each 100 KiB within it, is
// not given up: the progress the transfer reports restarts the clock.
func TestTimeoutSlow(t *testing.T) {
	const id = "7777777777777777777777777777777777777777"
	good := elfWithID(t, id)
	const pieces = 6
	body := append(good, make([]byte, pieces*chunk)...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		rest := body
		for len(rest) > 0 {
			n := min(len(rest), chunk)
			w.Write(rest[:n])
			w.(http.Flusher).Flush()
			rest = rest[n:]
			time.Sleep(250 * time.Millisecond)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	const timeout = time.Second // less than the pieces take in all
	for _, tr := range transfers(t) {
		t.Run(tr.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			c := &Client{URLs: []string{"http://" + ln.Addr().String()}, CachePath: cache, Timeout: timeout, Transfer: tr.tr}
			path, err := c.Find(context.Background(), mustHex(t, id), Debuginfo)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
				t.Errorf("downloaded %d bytes, want %d", len(got), len(body))
			}
		})
	}
}

// TestClean: the cleaning rules, elfutils'.
func TestClean(t *testing.T) {
	now := time.Now()
	day := 24 * time.Hour
	tests := []struct {
		name     string
		interval string    // cache_clean_interval_s; "" for missing
		cleaned  time.Time // its modification time
		maxAge   string
		files    map[string]time.Time // file: access and modification time
		want     []string
		dirs     []string
	}{
		{"defaults, not yet", "", now, "", map[string]time.Time{"aa/debuginfo": now.Add(-30 * day)},
			[]string{"aa/debuginfo"}, []string{"aa"}},
		{"interval passed, week-old removed", "86400", now.Add(-2 * day), "", map[string]time.Time{
			"aa/debuginfo":  now.Add(-8 * day),
			"bb/debuginfo":  now.Add(-6 * day),
			"bb/executable": now.Add(-8 * day),
			"cc/source-##x": now.Add(-8 * day),
			"dd/notes":      now.Add(-8 * day), // not the clients'
		}, []string{"bb/debuginfo", "dd/notes"}, []string{"bb", "dd"}},
		{"interval not passed", "86400", now.Add(-time.Hour), "0", map[string]time.Time{"aa/debuginfo": now.Add(-8 * day)},
			[]string{"aa/debuginfo"}, []string{"aa"}},
		{"max age 0 removes all", "0", now, "0", map[string]time.Time{"aa/debuginfo": now, "bb/executable": now.Add(-time.Minute)},
			nil, nil},
		{"stale temporary files", "0", now, "", map[string]time.Time{
			"aa/debuginfo.Ab12Cd":  now.Add(-2 * time.Hour),
			"aa/debuginfo.Xy34Zw":  now,
			"aa/executable.Qw56Er": now.Add(-2 * time.Hour),
		}, []string{"aa/debuginfo.Xy34Zw"}, []string{"aa"}},
		{"negative entries age too", "0", now, "600", map[string]time.Time{"aa/debuginfo": now.Add(-time.Hour)},
			nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			os.Chmod(cache, 0o700)
			if tt.interval != "" {
				p := filepath.Join(cache, intervalFile)
				os.WriteFile(p, []byte(tt.interval), 0o600)
				os.Chtimes(p, tt.cleaned, tt.cleaned)
			}
			if tt.maxAge != "" {
				os.WriteFile(filepath.Join(cache, maxAgeFile), []byte(tt.maxAge), 0o600)
			}
			for f, tm := range tt.files {
				p := filepath.Join(cache, f)
				os.MkdirAll(filepath.Dir(p), 0o700)
				os.WriteFile(p, []byte("x"), 0o600)
				os.Chtimes(p, tm, tm)
				os.Chtimes(filepath.Dir(p), tm, tm)
			}
			c := &Client{URLs: []string{deadURL(t)}, CachePath: cache, Transfer: debuginfodtest.InProcess}
			c.Find(context.Background(), mustHex(t, "ff"), Debuginfo)
			var got []string
			for _, s := range tree(t, cache) {
				got = append(got, strings.TrimSuffix(s, " 1"))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.dirs, dirs(cache)); diff != "" {
				t.Errorf("directories left (-want +got):\n%s", diff)
			}
		})
	}
}

func dirs(cache string) []string {
	var out []string
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestUnsafeCache: a cache directory other users could write is
// refused, and nothing is fetched into it.
func TestUnsafeCache(t *testing.T) {
	const id = "2222222222222222222222222222222222222222"
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cache, 0o777)
	s := startServer(t, map[string][]byte{id + "/debuginfo": elfWithID(t, id)})
	_, err := (&Client{URLs: []string{s.URL}, CachePath: cache, Transfer: debuginfodtest.InProcess}).Find(context.Background(), mustHex(t, id), Debuginfo)
	if err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("error %v, want the cache refused", err)
	}
	if s.hits.Load() != 0 {
		t.Error("the server was asked")
	}
}

func TestNewFromEnv(t *testing.T) {
	home := t.TempDir()
	oldHome := t.TempDir()
	os.Mkdir(filepath.Join(oldHome, ".debuginfod_client_cache"), 0o700)
	tests := []struct {
		env  map[string]string
		want *Client // nil for none
	}{
		{map[string]string{"HOME": home}, nil},
		{map[string]string{"HOME": home, "DEBUGINFOD_URLS": "  "}, nil},
		{map[string]string{"HOME": home, "DEBUGINFOD_URLS": "http://a  https://b/"},
			&Client{URLs: []string{"http://a", "https://b/"}, CachePath: home + "/.cache/debuginfod_client", Timeout: 90 * time.Second}},
		{map[string]string{"HOME": home, "XDG_CACHE_HOME": "/x", "DEBUGINFOD_URLS": "http://a", "DEBUGINFOD_TIMEOUT": "5s"},
			&Client{URLs: []string{"http://a"}, CachePath: "/x/debuginfod_client", Timeout: 5 * time.Second}},
		{map[string]string{"HOME": oldHome, "XDG_CACHE_HOME": "/x", "DEBUGINFOD_URLS": "http://a", "DEBUGINFOD_TIMEOUT": "-1"},
			&Client{URLs: []string{"http://a"}, CachePath: oldHome + "/.debuginfod_client_cache"}},
		{map[string]string{"HOME": home, "DEBUGINFOD_CACHE_PATH": "/c", "DEBUGINFOD_URLS": "http://a", "DEBUGINFOD_TIMEOUT": "x"},
			&Client{URLs: []string{"http://a"}, CachePath: "/c"}},
		{map[string]string{"DEBUGINFOD_URLS": "http://a", "DEBUGINFOD_PROGRESS": "1", "DEBUGINFOD_VERBOSE": "1"},
			&Client{URLs: []string{"http://a"}, CachePath: "/.cache/debuginfod_client", Timeout: 90 * time.Second, Progress: os.Stderr, Verbose: os.Stderr}},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		got := NewFromEnv(func(k string) string { return tt.env[k] }, &stderr)
		if tt.want != nil && tt.want.Progress != nil {
			tt.want.Progress, tt.want.Verbose = &stderr, &stderr
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Client{}), cmp.Comparer(func(a, b *bytes.Buffer) bool { return a == b })); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.env, diff)
		}
	}
}
