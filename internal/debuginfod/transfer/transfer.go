// Package transfer is the download of kdtrace-debuginfod: one GET over
// net/http, reported in the protocol of package wire. Only that command
// and tests import it: net/http, crypto/tls and the rest, with their
// initialisation, would otherwise be part of every kdtrace run, of which
// few download anything.
package transfer

import (
	"context"
	"errors"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/internal/debuginfod/wire"
)

// Run downloads url into body and writes its reports to out: the
// version, the status and, for 200, what the server said of the body,
// the progress after each write to body and done; error, with the
// cause, if the download failed. The request is made by net/http's
// default client: proxies as the environment names them and the
// system's certificates. It returns an error only when out could not
// be written.
func Run(ctx context.Context, url string, body io.Writer, out io.Writer) error {
	w := wire.NewWriter(out)
	var werr error
	report := func(r wire.Report) error {
		werr = w.Write(r)
		return werr
	}
	err := get(ctx, url, body, report)
	if werr != nil {
		return werr
	}
	if err != nil {
		return w.Write(wire.Report{Kind: wire.Error, Text: err.Error()})
	}
	return nil
}

func get(ctx context.Context, url string, body io.Writer, report func(wire.Report) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kdtrace")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the server's, which kdtrace names
		}
		return err
	}
	defer resp.Body.Close()
	text := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	if err := report(wire.Report{Kind: wire.Status, N: int64(resp.StatusCode), Text: text}); err != nil || resp.StatusCode != http.StatusOK {
		return err
	}
	if resp.ContentLength >= 0 {
		if err := report(wire.Report{Kind: wire.Length, N: resp.ContentLength}); err != nil {
			return err
		}
	}
	if mt, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		if err := report(wire.Report{Kind: wire.Modified, N: mt.Unix()}); err != nil {
			return err
		}
	}
	w := &reporter{w: body, report: report}
	if _, err := io.CopyBuffer(w, resp.Body, make([]byte, bufSize)); err != nil {
		return err
	}
	return report(wire.Report{Kind: wire.Done, N: w.n})
}

// bufSize is the most read from the server at once, and so written to
// the file and reported: a read returns what has come, so a slow
// download is reported as finely as it comes, and a fast one in writes
// large enough that reporting them costs little (bench/debuginfod.sh's
// cold run, 600 MiB from loopback, took 1.3 s with io.Copy's 32 KiB
// and 0.67 s so).
const bufSize = 256 << 10

// reporter writes to w, reporting the bytes written after each write.
type reporter struct {
	w      io.Writer
	n      int64
	report func(wire.Report) error
}

func (r *reporter) Write(b []byte) (int, error) {
	n, err := r.w.Write(b)
	r.n += int64(n)
	if err != nil {
		return n, err
	}
	return n, r.report(wire.Report{Kind: wire.Progress, N: r.n})
}
