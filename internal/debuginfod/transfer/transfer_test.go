package transfer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfod/wire"
)

// readAll reads the reports of out, which must be well-formed, and
// returns them with the progress reports left out, and how many of
// those there were.
func readAll(t *testing.T, out []byte) (reports []wire.Report, progress int) {
	t.Helper()
	r := wire.NewReader(bytes.NewReader(out))
	for {
		rep, err := r.Next()
		if err == io.EOF {
			return reports, progress
		}
		if err != nil {
			t.Fatalf("the reports %q: %v", out, err)
		}
		if rep.Kind == wire.Progress {
			progress++
			continue
		}
		reports = append(reports, rep)
	}
}

func TestRun(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	modified := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    []wire.Report // but progress
		body    []byte        // what the file holds after
	}{
		{"whole", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Last-Modified", modified.Format(http.TimeFormat))
			http.ServeContent(w, r, "", modified, bytes.NewReader(body))
		}, []wire.Report{
			{Kind: wire.Status, N: 200, Text: "OK"},
			{Kind: wire.Length, N: int64(len(body))},
			{Kind: wire.Modified, N: modified.Unix()},
			{Kind: wire.Done, N: int64(len(body))},
		}, body},
		{"no length, no time", func(w http.ResponseWriter, r *http.Request) {
			w.Write(body[:10])
			w.(http.Flusher).Flush() // chunked
			w.Write(body[10:20])
		}, []wire.Report{
			{Kind: wire.Status, N: 200, Text: "OK"},
			{Kind: wire.Done, N: 20},
		}, body[:20]},
		{"bad time", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Last-Modified", "yesterday")
			w.Write(body[:3])
		}, []wire.Report{
			{Kind: wire.Status, N: 200, Text: "OK"},
			{Kind: wire.Length, N: 3},
			{Kind: wire.Done, N: 3},
		}, body[:3]},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, []wire.Report{
			{Kind: wire.Status, N: 200, Text: "OK"},
			{Kind: wire.Length},
			{Kind: wire.Done},
		}, nil},
		{"404", http.NotFound, []wire.Report{{Kind: wire.Status, N: 404, Text: "Not Found"}}, nil},
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "broken", http.StatusInternalServerError)
		}, []wire.Report{{Kind: wire.Status, N: 500, Text: "Internal Server Error"}}, nil},
		{"cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write(body[:40])
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, []wire.Report{
			{Kind: wire.Status, N: 200, Text: "OK"},
			{Kind: wire.Length, N: 100},
			{Kind: wire.Error, Text: "unexpected EOF"},
		}, body[:40]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var agent string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				agent = r.UserAgent()
				tt.handler(w, r)
			}))
			defer srv.Close()
			var file, out bytes.Buffer
			if err := Run(context.Background(), srv.URL+"/buildid/ab/debuginfo", &file, &out); err != nil {
				t.Fatal(err)
			}
			got, progress := readAll(t, out.Bytes())
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reports (-want +got):\n%s", diff)
			}
			if !bytes.Equal(file.Bytes(), tt.body) {
				t.Errorf("the file holds %d bytes, want %d", file.Len(), len(tt.body))
			}
			// A report at least for each read.
			if min := len(tt.body) / bufSize; progress < min || len(tt.body) > 0 && progress == 0 {
				t.Errorf("%d progress reports for %d bytes, want at least %d", progress, len(tt.body), max(min, 1))
			}
			if agent != "kdtrace" {
				t.Errorf("User-Agent %q, want kdtrace", agent)
			}
		})
	}
}

// TestRunUnreachable: a request that fails is an error report, without
// the URL, which kdtrace names.
func TestRunUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	var file, out bytes.Buffer
	if err := Run(context.Background(), url+"/buildid/ab/debuginfo", &file, &out); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, out.Bytes())
	if len(got) != 1 || got[0].Kind != wire.Error || !strings.Contains(got[0].Text, "connection refused") || strings.Contains(got[0].Text, url) {
		t.Errorf("reports %v, want one error of a refused connection, without %s", got, url)
	}
}

// TestRunCancelled: cancelling the context ends a download that the
// server stalls, with an error report.
func TestRunCancelled(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write(make([]byte, 500))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var file, out bytes.Buffer
	if err := Run(ctx, srv.URL, &file, &out); err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, out.Bytes())
	if n := len(got); n == 0 || got[n-1].Kind != wire.Error || !strings.Contains(got[n-1].Text, "context canceled") {
		t.Errorf("reports %v, want the last an error of the cancelled context", got)
	}
}

// failWriter fails after its first n writes.
type failWriter struct{ n int }

func (w *failWriter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("broken pipe")
	}
	w.n--
	return len(b), nil
}

// TestRunReportFails: when the reports cannot be written, Run stops
// and says so.
func TestRunReportFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1<<20))
	}))
	defer srv.Close()
	for n := range 3 {
		var file bytes.Buffer
		if err := Run(context.Background(), srv.URL, &file, &failWriter{n: n}); err == nil || err.Error() != "broken pipe" {
			t.Errorf("reports failing after %d: %v, want the writer's error", n, err)
		}
		if file.Len() == 1<<20 {
			t.Errorf("reports failing after %d: the download went on", n)
		}
	}
}
