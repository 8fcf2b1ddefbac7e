package linux

import (
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// barrierCloser's Close waits until all of its group's closers are
// being closed at once, then returns err.
type barrierCloser struct {
	wg  *sync.WaitGroup
	err error
}

func (c *barrierCloser) Close() error {
	c.wg.Done()
	c.wg.Wait()
	return c.err
}

// TestCloseAll checks that closeAll closes attachments several at once
// (each closer here returns only once closers of them are being
// closed), and returns each one's error in its place.
func TestCloseAll(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(closers)
	cs := make([]io.Closer, closers)
	want := make([]error, closers)
	for i := range cs {
		if i%3 == 0 {
			want[i] = errors.New("refused")
		}
		cs[i] = &barrierCloser{&wg, want[i]}
	}
	done := make(chan []error)
	go func() { done <- closeAll(cs) }()
	select {
	case errs := <-done:
		for i := range errs {
			if errs[i] != want[i] {
				t.Errorf("closer %d: %v, want %v", i, errs[i], want[i])
			}
		}
	case <-time.After(time.Minute):
		t.Fatalf("closeAll did not close %d closers at once", closers)
	}
}
