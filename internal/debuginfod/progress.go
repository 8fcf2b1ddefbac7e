package debuginfod

import (
	"fmt"
	"io"
	"time"
)

// progressEvery is how often a download's progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// progress draws one line of a download's progress on a terminal: the
// size so far and in all, the rate, and the time left.
type progress struct {
	w     io.Writer
	url   string
	total int64 // -1 when the server did not say
	start time.Time
	last  time.Time
	n     int64
	shown bool
}

// newProgress returns the progress of a download from url, of a size
// not yet known; nil, which shows nothing, when c has no Progress
// writer.
func (c *Client) newProgress(url string) *progress {
	if c.Progress == nil {
		return nil
	}
	now := time.Now()
	return &progress{w: c.Progress, url: url, total: -1, start: now, last: now}
}

// setTotal says the download's size, once the server has said it.
func (p *progress) setTotal(total int64) {
	if p != nil {
		p.total = total
	}
}

func (p *progress) update(n int64) {
	if p == nil {
		return
	}
	p.n = n
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.draw(now)
	}
}

// done ends the line, saying why the download stopped if err is not
// nil.
func (p *progress) done(err error) {
	if p == nil || (!p.shown && err == nil && time.Since(p.start) < progressEvery) {
		return // too quick to have shown anything
	}
	p.draw(time.Now())
	if err != nil {
		fmt.Fprintf(p.w, ": %v", err)
	}
	fmt.Fprintln(p.w)
}

func (p *progress) draw(now time.Time) {
	p.shown = true
	secs := now.Sub(p.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.n) / secs
	}
	line := fmt.Sprintf("\rdebuginfod: %s: %s", p.url, size(p.n))
	if p.total >= 0 {
		line += fmt.Sprintf(" of %s", size(p.total))
	}
	line += fmt.Sprintf(", %s/s", size(int64(rate)))
	if p.total >= 0 && rate > 0 && p.n < p.total {
		left := time.Duration(float64(p.total-p.n) / rate * float64(time.Second))
		line += fmt.Sprintf(", %v left", left.Round(time.Second))
	}
	fmt.Fprintf(p.w, "%s\x1b[K", line)
}

// size says n bytes in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
