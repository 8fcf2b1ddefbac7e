// Package debuginfodtest runs elfutils' debuginfod for tests: a real
// server on a loopback port, serving the files of a directory.
package debuginfodtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// Server is a debuginfod the test started.
type Server struct {
	URL   string
	cmd   *exec.Cmd
	log   *os.File
	proxy net.Listener
}

// serverPort is the port debuginfod listens on in its namespace.
const serverPort = 8002

// Start starts /usr/bin/debuginfod (or the one in PATH), scanning dir
// for ELF and DWARF files (following symbolic links), and returns once
// it serves the debuginfo of every build-id of ids. It skips the test
// when debuginfod is not installed; the server is stopped, by its
// process ID, when the test ends.
//
// elfutils' debuginfod listens on every interface, with no option to
// bind one address: it runs in a network namespace of its own, with
// only a loopback, and is reached through a proxy on a free port of
// 127.0.0.1, which Server.URL names.
func Start(t testing.TB, dir string, ids ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Skipf("no debuginfod (Debian package debuginfod): %v", err)
	}
	work := t.TempDir()
	log, err := os.Create(filepath.Join(work, "log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{log: log}
	s.cmd = exec.Command(bin, "-p", fmt.Sprint(serverPort), "-d", filepath.Join(work, "db.sqlite"),
		"-F", "-L", "--disable-source-scan", "-t", "1", "-g", "0", dir)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := isolate(s.cmd); err != nil {
		log.Close()
		t.Skipf("debuginfod: %v", err)
	}
	if err := s.cmd.Start(); err != nil {
		log.Close()
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("debuginfod needs a network namespace of its own, which only root may make: %v", err)
		}
		t.Fatalf("starting debuginfod: %v", err)
	}
	t.Cleanup(s.Stop)
	netns := fmt.Sprintf("/proc/%d/ns/net", s.cmd.Process.Pid)
	if err := inNetns(netns, loopbackUp); err != nil {
		t.Fatalf("bringing up the loopback of debuginfod's namespace: %v", err)
	}
	s.proxy, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + s.proxy.Addr().String()
	go s.forward(netns)
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range ids {
		for !s.serves(id) {
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(log.Name())
				t.Fatalf("debuginfod did not serve %s within 2 minutes; its log:\n%s", id, b)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return s
}

// serves reports whether the server answers 200 for the debuginfo of
// id, reading only the headers.
func (s *Server) serves(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/buildid/"+id+"/debuginfo", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	cancel() // the body, perhaps hundreds of megabytes, is not wanted
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// forward copies each connection to the proxy to and from one to the
// server, made in the server's namespace, until the proxy is closed.
func (s *Server) forward(netns string) {
	for {
		c, err := s.proxy.Accept()
		if err != nil {
			return
		}
		var up net.Conn
		err = inNetns(netns, func() (err error) {
			up, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", serverPort))
			return err
		})
		if err != nil {
			c.Close()
			continue
		}
		go func() {
			io.Copy(up, c)
			up.(*net.TCPConn).CloseWrite()
		}()
		go func() {
			io.Copy(c, up)
			c.Close()
			up.Close()
		}()
	}
}

// Stop stops the server, by its process ID, and waits for it.
func (s *Server) Stop() {
	if s.proxy != nil {
		s.proxy.Close()
	}
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// SlowServer serves body for any request, on a free port of
// 127.0.0.1 whose URL it returns: it sends the first half, says so on
// started (if not nil), and then waits for release (nil: never) to send
// the rest, or for the request to end.
func SlowServer(t testing.TB, body []byte, started chan<- struct{}, release <-chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-release:
			w.Write(body[len(body)/2:])
		case <-r.Context().Done():
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// Loop is a program that calls, in a loop, a function into which inl
// is inlined, as many times as its argument says (100 by default), and
// prints a sum.
const Loop = `#include <stdio.h>
#include <stdlib.h>
static inline __attribute__((always_inline)) int inl(int x) { return x * 3 + 1; }
__attribute__((noinline)) int step(int x) { return inl(x) ^ (x >> 1); }
int main(int argc, char **argv) {
	volatile int sink = 0;
	int n = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < n; i++)
		sink += step(i);
	printf("%d\n", sink);
	return 0;
}
`

// Fixture builds Loop with -g into dir/loop, moves its DWARF into
// served/loop.debug as distributions do (objcopy --only-keep-debug)
// and strips dir/loop of it (strip -g, which keeps the symbol table).
// It returns the stripped program and its build-id.
func Fixture(t testing.TB, dir, served string) (prog, id string) {
	t.Helper()
	gcctest.Need(t, "objcopy", "strip", "readelf")
	prog = gcctest.Build(t, dir, "loop", Loop, "-g", "-Wl,--build-id")
	gcctest.Run(t, dir, "objcopy", "--only-keep-debug", prog, filepath.Join(served, "loop.debug"))
	gcctest.Run(t, dir, "strip", "-g", prog)
	out, err := exec.Command("readelf", "-n", prog).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", prog, err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s has no build-id:\n%s", prog, out)
	}
	return prog, string(m[1])
}
