package debuginfod

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kdtrace/kdtrace/internal/buildid"
	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/debuginfod/wire"
)

// Kind is what is asked of a build-id: its debug file or its
// executable, the last part of the URL and the name in the cache.
type Kind string

const (
	Debuginfo  Kind = "debuginfo"
	Executable Kind = "executable"
)

// Client finds files by build-id, in its cache or from its servers. A
// Client may be used from several goroutines.
type Client struct {
	URLs      []string      // the servers, tried in order
	CachePath string        // the cache directory
	Timeout   time.Duration // for each 100 KiB of a download; 0 for none
	Progress  io.Writer     // where downloads show their progress; nil for nowhere
	Verbose   io.Writer     // where lookups say what they do; nil for nowhere
	// Transfer makes the downloads; nil means kdtrace-debuginfod's
	// (see Helper), looked for at the first download.
	Transfer Transfer

	mu   sync.Mutex
	down map[string]error // servers that could not be reached, and why

	helperOnce sync.Once
	helper     string // the helper's path
	helperErr  error  // why there is none
}

// chunk is the amount of data that each Timeout must bring.
const chunk = 100 << 10

// staleTemp is how long a temporary file may go unwritten before a
// lookup of its build-id takes it for a killed download's and removes
// it.
const staleTemp = time.Hour

// errNotFound is a server's 404.
var errNotFound = errors.New("not found (404)")

// Error says why a file could not be found: the servers asked, each
// with why it failed, or why none was asked.
type Error struct {
	BuildID string
	Kind    Kind
	Tried   []Attempt
	// Miss says that a recent lookup found nothing, remembered for
	// cache_miss_s seconds, so no server was asked.
	Miss bool
	// Err is a problem with the cache that stopped the lookup before
	// any server was asked.
	Err error
}

// Attempt is one server asked, and why it failed.
type Attempt struct {
	Server string
	Err    error
}

func (e *Error) Error() string {
	what := fmt.Sprintf("debuginfod: no %s for build-id %s", e.Kind, e.BuildID)
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", what, e.Err)
	case e.Miss:
		return fmt.Sprintf("%s: not found by %s recently (cache_miss_s)", what, strings.Join(e.servers(), ", "))
	}
	var parts []string
	for _, a := range e.Tried {
		parts = append(parts, fmt.Sprintf("%s: %v", a.Server, a.Err))
	}
	return fmt.Sprintf("%s: %s", what, strings.Join(parts, "; "))
}

func (e *Error) attemptErrs() []error {
	var errs []error
	for _, a := range e.Tried {
		errs = append(errs, a.Err)
	}
	return errs
}

func (e *Error) servers() []string {
	var s []string
	for _, a := range e.Tried {
		s = append(s, a.Server)
	}
	return s
}

// Unwrap returns the causes, so that errors.Is finds a cancelled
// context.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range append([]error{e.Err}, e.attemptErrs()...) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// NotFound reports whether every server answered that it has no such
// file: not a failure to ask.
func (e *Error) NotFound() bool {
	if e.Miss {
		return true
	}
	if e.Err != nil || len(e.Tried) == 0 {
		return false
	}
	for _, a := range e.Tried {
		if !errors.Is(a.Err, errNotFound) {
			return false
		}
	}
	return true
}

// Servers returns the servers' URLs, for messages.
func (c *Client) Servers() string { return strings.Join(c.URLs, " ") }

// Find returns the path in the cache of the file of kind for buildID,
// downloading it from the first server that has it when the cache has
// not. The error is an *Error. Cancelling ctx stops a download and
// leaves nothing of it in the cache.
func (c *Client) Find(ctx context.Context, buildID []byte, kind Kind) (string, error) {
	id := hex.EncodeToString(buildID)
	fail := func(err error) (string, error) { return "", &Error{BuildID: id, Kind: kind, Err: err} }
	if len(buildID) == 0 {
		return fail(errors.New("no build-id"))
	}
	if kind != Debuginfo && kind != Executable {
		return fail(fmt.Errorf("unknown kind %q", kind))
	}
	c.verbosef("checking cache dir %s", c.CachePath)
	dir, err := cachedir.Open(c.CachePath)
	if err != nil {
		return fail(fmt.Errorf("cache: %w", err))
	}
	defer dir.Close()
	now := time.Now()
	if err := c.clean(dir, now); err != nil {
		return fail(fmt.Errorf("cleaning cache: %w", err))
	}
	sub, err := dir.Sub(id)
	if err != nil {
		return fail(fmt.Errorf("cache: %w", err))
	}
	defer sub.Close()
	name := string(kind)
	path := filepath.Join(sub.Path, name)
	if st, err := sub.Lstat(name); err == nil {
		switch {
		case st.Regular && st.Size > 0:
			err := c.check(sub, name, buildID)
			if err == nil {
				// Used: the cleaning goes by access time, which
				// a noatime mount would not update.
				sub.SetTimes(name, now, st.ModTime)
				c.verbosef("found %s in the cache", path)
				return path, nil
			}
			c.verbosef("%v; removed", err)
		case st.Regular && now.Sub(st.ModTime) <= config(dir, missFile, defaultMiss):
			return "", &Error{BuildID: id, Kind: kind, Miss: true, Tried: c.attempts(nil)}
		}
		sub.Remove(name)
	}
	removeStale(sub, name, now)

	e := &Error{BuildID: id, Kind: kind}
	tr, err := c.transfer()
	if err != nil {
		e.Err = err
		sub.Close()
		dir.RemoveDir(id) // only if empty
		return "", e
	}
	for _, server := range c.URLs {
		if err := c.isDown(server); err != nil {
			e.Tried = append(e.Tried, Attempt{server, fmt.Errorf("not reachable earlier: %w", err)})
			continue
		}
		err := c.fetch(ctx, tr, sub, server, id, kind)
		if err == nil {
			return path, nil
		}
		e.Tried = append(e.Tried, Attempt{server, err})
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil && e.NotFound() {
		// An empty file remembers the miss for cache_miss_s.
		sub.WriteFile(name, nil)
	} else {
		sub.Close()
		dir.RemoveDir(id) // only if empty
	}
	return "", e
}

// attempts lists the servers, for an error where none was asked.
func (c *Client) attempts(err error) []Attempt {
	var as []Attempt
	for _, s := range c.URLs {
		as = append(as, Attempt{s, err})
	}
	return as
}

func (c *Client) isDown(server string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.down[server]
}

func (c *Client) setDown(server string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down == nil {
		c.down = map[string]error{}
	}
	c.down[server] = err
}

// check verifies that the file name of dir is an ELF file of buildID.
func (c *Client) check(dir *cachedir.Dir, name string, buildID []byte) error {
	f, err := dir.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := buildid.File(f)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	if !bytes.Equal(got, buildID) {
		return fmt.Errorf("%s has build-id %x, not %x", f.Name(), got, buildID)
	}
	return nil
}

// fetch downloads the file from server into the cache directory sub
// by tr, through a temporary file renamed into place once checked.
func (c *Client) fetch(ctx context.Context, tr Transfer, sub *cachedir.Dir, server, id string, kind Kind) (err error) {
	url := server
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	url += "buildid/" + id + "/" + string(kind)
	c.verbosef("url %s", url)

	// Derived, which asks ctx for its Done, before the temporary file
	// is made: a context that starts listening for what cancels it when
	// first asked (kdtrace's, for SIGINT) listens by then.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	tmp, err := sub.CreateTemp(string(kind) + ".")
	if err != nil {
		return err
	}
	tmpName := filepath.Base(tmp.Name())
	defer func() {
		if tmp != nil {
			tmp.Close()
		}
		if err != nil {
			sub.Remove(tmpName)
		}
	}()

	// The timeout: each Timeout must bring another chunk of the file.
	var timedOut atomic.Bool
	d := &download{client: c, url: url, length: -1}
	if c.Timeout > 0 {
		watchdog := time.AfterFunc(c.Timeout, func() { timedOut.Store(true); cancel() })
		defer watchdog.Stop()
		d.onChunk = func() { watchdog.Reset(c.Timeout) }
	}

	err = d.run(ctx, tr, tmp)
	if err != nil && ctx.Err() != nil {
		err = ctx.Err() // what the transfer made of it says less
		if timedOut.Load() {
			err = fmt.Errorf("less than %d KiB in %v (DEBUGINFOD_TIMEOUT)", chunk>>10, c.Timeout)
		}
	}
	switch {
	case err != nil && d.status == 0:
		if ctx.Err() == nil || timedOut.Load() {
			c.setDown(server, err)
		}
		return err
	case err == nil && d.status == 404:
		return errNotFound
	case err == nil && d.status != 200:
		return errors.New(strings.TrimSpace(fmt.Sprintf("%d %s", d.status, d.text)))
	}
	d.progress.done(err)
	if err != nil {
		return fmt.Errorf("after %d bytes: %w", d.n, err)
	}
	if d.length >= 0 && d.n != d.length {
		return fmt.Errorf("got %d bytes of %d", d.n, d.length)
	}

	got, err := buildid.File(tmp)
	if err != nil {
		return fmt.Errorf("the file it sent: %w", err)
	}
	if hex.EncodeToString(got) != id {
		return fmt.Errorf("it sent a file of build-id %x", got)
	}
	// Read-only, as elfutils leaves its files, and dated as the
	// server dates it.
	if err := tmp.Chmod(0o400); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		tmp = nil
		return err
	}
	tmp = nil
	if !d.modified.IsZero() {
		sub.SetTimes(tmpName, time.Now(), d.modified)
	}
	if err := sub.Rename(tmpName, string(kind)); err != nil {
		return err
	}
	c.verbosef("got file from server")
	return nil
}

// download follows a transfer by its reports.
type download struct {
	client   *Client
	url      string
	status   int64  // the server's answer; 0 before it
	text     string // the server's text for it
	length   int64  // the body's length; -1 when not said
	modified time.Time
	n        int64 // bytes in the file
	progress *progress
	next     int64  // the bytes at which to call onChunk
	onChunk  func() // called after each chunk; nil for never
}

// run runs the transfer tr of d.url into body, following its reports,
// and returns why it failed: the transfer's own word, or the reports'
// being cut short or garbled, or the transfer's failure to run.
func (d *download) run(ctx context.Context, tr Transfer, body *os.File) error {
	reports, err := tr(ctx, d.url, body)
	if err != nil {
		return err
	}
	err = d.follow(wire.NewReader(reports))
	if cerr := reports.Close(); cerr != nil {
		err = cerr // the helper's crash says more than its reports' end
	}
	return err
}

// follow reads the reports to their end, showing the progress and
// restarting the watchdog as the file grows.
func (d *download) follow(r *wire.Reader) error {
	for {
		rep, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s's reports: %w", helperName, err)
		}
		switch rep.Kind {
		case wire.Status:
			d.status, d.text = rep.N, rep.Text
			if d.status == 200 {
				d.progress = d.client.newProgress(d.url)
			}
		case wire.Length:
			d.length = rep.N
			d.progress.setTotal(rep.N)
		case wire.Modified:
			d.modified = time.Unix(rep.N, 0)
		case wire.Progress, wire.Done:
			d.n = rep.N
			d.progress.update(d.n)
			if d.onChunk != nil && d.n >= d.next {
				d.next = d.n + chunk
				d.onChunk()
			}
		case wire.Error:
			return errors.New(rep.Text)
		}
	}
}

// removeStale removes the temporary files of kind that killed downloads
// left in dir.
func removeStale(dir *cachedir.Dir, kind string, now time.Time) {
	names, err := dir.Names()
	if err != nil {
		return
	}
	for _, n := range names {
		if !isTemp(n, kind) {
			continue
		}
		if st, err := dir.Lstat(n); err == nil && st.Regular && now.Sub(st.ModTime) > staleTemp {
			dir.Remove(n)
		}
	}
}

// isTemp reports whether name is a temporary file of kind: kind, a dot
// and six letters, as CreateTemp and elfutils' mkstemp make them.
func isTemp(name, kind string) bool {
	rest, ok := strings.CutPrefix(name, kind+".")
	return ok && len(rest) == 6
}

func (c *Client) verbosef(format string, args ...any) {
	if c.Verbose != nil {
		fmt.Fprintf(c.Verbose, "debuginfod: "+format+"\n", args...)
	}
}
