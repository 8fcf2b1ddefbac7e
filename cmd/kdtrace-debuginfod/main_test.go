package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// TestUsage: without a URL, or without the file to write, the command
// says what is missing and exits with status 2.
func TestUsage(t *testing.T) {
	bin := kdtracebin.BuildHelper(t, t.TempDir())
	dir := t.TempDir()
	writable, err := os.Create(filepath.Join(dir, "body"))
	if err != nil {
		t.Fatal(err)
	}
	defer writable.Close()
	readOnly, err := os.Open(writable.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer readOnly.Close()
	tests := []struct {
		args    []string
		fd3     *os.File
		wantErr string
	}{
		{nil, writable, "usage: kdtrace-debuginfod URL"},
		{[]string{"http://a", "http://b"}, writable, "usage: kdtrace-debuginfod URL"},
		{[]string{"http://127.0.0.1:1/"}, nil, "kdtrace-debuginfod: descriptor 3 is no regular file open for writing"},
		{[]string{"http://127.0.0.1:1/"}, readOnly, "kdtrace-debuginfod: descriptor 3 is no regular file open for writing"},
		{[]string{"http://127.0.0.1:1/"}, os.Stdin, "kdtrace-debuginfod: descriptor 3 is no regular file open for writing"},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		if tt.fd3 != nil {
			cmd.ExtraFiles = []*os.File{tt.fd3}
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), tt.wantErr) || stdout.Len() != 0 {
			t.Errorf("%q: %v, stdout %q, stderr %q; want status 2 and %q", tt.args, err, stdout.String(), stderr.String(), tt.wantErr)
		}
	}
}

// TestStdinEnds: the download ends when the command's standard input
// does, kdtrace having ended, and the end is reported.
func TestStdinEnds(t *testing.T) {
	bin := kdtracebin.BuildHelper(t, t.TempDir())
	started := make(chan struct{})
	url := debuginfodtest.SlowServer(t, make([]byte, 1000), started, nil)
	body, err := os.Create(filepath.Join(t.TempDir(), "body"))
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	cmd := exec.Command(bin, url)
	cmd.ExtraFiles = []*os.File{body}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-started
	var lines []string // but progress
	s := bufio.NewScanner(stdout)
	for s.Scan() {
		if s.Text() == "progress 500" {
			stdin.Close()
		}
		if !strings.HasPrefix(s.Text(), "progress ") {
			lines = append(lines, s.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	want := "version 1\nstatus 200 OK\nlength 1000\nerror context canceled"
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("reports:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := body.Stat(); err != nil || fi.Size() != 500 {
		t.Errorf("the file: %v, %v; want 500 bytes", fi, err)
	}
}
