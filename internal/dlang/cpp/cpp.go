// Package cpp runs the system C preprocessor over D source, as dtrace -C
// does.
//
// The source goes to cpp on its standard input and the output comes back
// with cpp's line markers (# N "file"), which the D lexer honours so that
// errors name the right file and line. A script's "#!" first line is
// blanked first, keeping its newline, so line numbers stay right.
package cpp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// version is the D version passed to cpp as __SUNW_D_VERSION, as
// dtrace's dt_vmax: 1.13.0.
const version = 0x010d0000

// Options are the preprocessor options of dtrace -D, -U, -I and -H.
type Options struct {
	Path     string   // the preprocessor; "cpp" from PATH when empty
	Defines  []string // -D name[=value]
	Undefs   []string // -U name
	Includes []string // -I dir
	Headers  bool     // -H: cpp lists the headers it includes on stderr
	Timeout  time.Duration
}

// result is the preprocessed text and, with Options.Headers, what cpp
// printed about the headers it included.
type result struct {
	Text    []byte
	Headers []byte
}

// Preprocess runs cpp over src, which is named name in line markers and
// errors.
func Preprocess(ctx context.Context, name string, src []byte, opts Options) (*result, error) {
	path := opts.Path
	if path == "" {
		path = "cpp"
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	// -undef drops the compiler's predefined macros: with __GNUC__ gone,
	// system headers fall back to plain C that D can parse, and names
	// like "linux" and "unix" stay names. The target's own macros are
	// defined back explicitly. -ffreestanding keeps gcc from including
	// stdc-predef.h.
	args := []string{"-undef", "-ffreestanding", fmt.Sprintf("-D__SUNW_D_VERSION=0x%08x", version)}
	args = append(args, targetMacros()...)
	for _, d := range opts.Defines {
		args = append(args, "-D"+d)
	}
	for _, u := range opts.Undefs {
		args = append(args, "-U"+u)
	}
	for _, i := range opts.Includes {
		args = append(args, "-I"+i)
	}
	if opts.Headers {
		args = append(args, "-H")
	}
	args = append(args, "-")
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = bytes.NewReader(blankInterpreter(src))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.ReplaceAll(errb.String(), "<stdin>", name))
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("preprocessor failed: %s", msg)
		}
		return nil, fmt.Errorf("failed to run preprocessor %s: %w", path, err)
	}
	r := &result{Text: out.Bytes()}
	if opts.Headers {
		r.Headers = errb.Bytes()
	}
	return r, nil
}

// blankInterpreter replaces a "#!" first line by an empty line.
func blankInterpreter(src []byte) []byte {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return src
	}
	i := bytes.IndexByte(src, '\n')
	if i < 0 {
		return nil
	}
	return src[i:]
}

// targetMacros defines the macros that say which system and data model a
// script is compiled for; they are the ones D scripts and system headers
// test.
func targetMacros() []string {
	m := []string{"-D__STDC__=1", "-D_LP64=1", "-D__LP64__=1", "-D__ELF__=1"}
	if runtime.GOOS == "linux" {
		// glibc's default feature set pulls inline function definitions
		// into <sys/types.h>; the POSIX set keeps headers to the
		// declarations D understands.
		m = append(m, "-D_POSIX_C_SOURCE=200809L")
	}
	switch runtime.GOOS {
	case "linux":
		m = append(m, "-D__linux__=1", "-D__linux=1", "-D__unix__=1", "-D__unix=1")
	case "freebsd":
		m = append(m, "-D__FreeBSD__=1", "-D__unix__=1", "-D__unix=1")
	}
	switch runtime.GOARCH {
	case "amd64":
		m = append(m, "-D__x86_64__=1", "-D__x86_64=1", "-D__amd64__=1", "-D__amd64=1")
	case "arm64":
		m = append(m, "-D__aarch64__=1")
	}
	return m
}
