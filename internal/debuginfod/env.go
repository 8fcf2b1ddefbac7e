package debuginfod

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// defaultTimeout is DEBUGINFOD_TIMEOUT's default, elfutils'.
const defaultTimeout = 90 * time.Second

// NewFromEnv returns the client the environment describes (see the
// package comment), reading variables through getenv; nil when
// DEBUGINFOD_URLS names no server. Progress and verbose output go to
// stderr.
func NewFromEnv(getenv func(string) string, stderr io.Writer) *Client {
	urls := strings.Fields(getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return nil
	}
	c := &Client{URLs: urls, CachePath: cachePath(getenv), Timeout: defaultTimeout}
	if v, ok := lookup(getenv, "DEBUGINFOD_TIMEOUT"); ok {
		c.Timeout = time.Duration(atoi(v)) * time.Second
		if c.Timeout < 0 {
			c.Timeout = 0
		}
	}
	if _, ok := lookup(getenv, "DEBUGINFOD_PROGRESS"); ok || isTerminal(stderr) {
		c.Progress = stderr
	}
	if _, ok := lookup(getenv, "DEBUGINFOD_VERBOSE"); ok {
		c.Verbose = stderr
	}
	return c
}

// lookup reports a variable as set when getenv returns it non-empty:
// getenv cannot tell an empty variable from an unset one.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// cachePath is where elfutils' client puts its cache.
func cachePath(getenv func(string) string) string {
	if p := getenv("DEBUGINFOD_CACHE_PATH"); p != "" {
		return p
	}
	home := getenv("HOME")
	if home == "" {
		home = "/"
	}
	if old := filepath.Join(home, ".debuginfod_client_cache"); exists(old) {
		return old
	}
	if xdg := getenv("XDG_CACHE_HOME"); xdg != "" {
		return filepath.Join(xdg, "debuginfod_client")
	}
	return filepath.Join(home, ".cache", "debuginfod_client")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// atoi reads a number as C's atoi does: leading blanks, a sign and
// digits, 0 when there are none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// isTerminal reports whether w is a terminal (a character device; a
// null device, also one, shows nothing anyway).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
