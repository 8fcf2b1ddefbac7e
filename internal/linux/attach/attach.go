package attach

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// An Attachment is what one call of the package attached: links and
// perf events. Close detaches them all; the kernel also releases them
// when the process ends, however it ends.
type attachment struct {
	mu      sync.Mutex
	closers []io.Closer
}

func (a *attachment) add(c io.Closer) { a.closers = append(a.closers, c) }

// Close detaches everything, the last attached first, and returns the
// errors met. Closing twice does nothing the second time.
func (a *attachment) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, c := range slices.Backward(a.closers) {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	a.closers = nil
	return errors.Join(errs...)
}

// fail closes what a was given and returns err: attaching a group is
// all or nothing.
func (a *attachment) fail(err error) (*attachment, error) {
	a.Close()
	return nil, err
}

// A SiteError is the refusal of one site of a call: Index is its place
// in the sites the call was given, so that the caller can name the probe
// it came from; Site names it as "function+offset".
type siteError struct {
	Index int
	Site  string
	Err   error
}

func (e *siteError) Error() string { return e.Site + ": " + e.Err.Error() }

func (e *siteError) Unwrap() error { return e.Err }

// checkCookies checks that there is one cookie per site.
func checkCookies(sites, cookies int) error {
	if sites != cookies {
		return fmt.Errorf("%d sites but %d cookies", sites, cookies)
	}
	if sites == 0 {
		return errors.New("no sites to attach")
	}
	return nil
}
