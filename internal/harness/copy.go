package harness

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// copyDir copies the files of src (not its subfolders, which no test
// reads) into dst, keeping their modes.
func copyDir(dst, src string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(dst, e.Name()), filepath.Join(src, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	mode := fi.Mode().Perm() | 0o200
	if strings.HasSuffix(dst, ".exe") {
		// Helpers the suite ships as scripts: the harness installs
		// them executable.
		mode |= 0o555
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// buildHelpers builds the folder's helper programs as the harness's
// Makefile does: each tst.X.c into tst.X.exe, unoptimized and with
// debugging information, so that pid probes find the functions the
// tests name. When X.d is beside it, the program's USDT providers are
// made from it as bsd.prog.mk makes them: dtrace -h writes X.h, which
// tst.X.c includes, and dtrace -G links X.o from its object. It
// returns why each helper that failed did, by tst.X.
func (r *Runner) buildHelpers(dir string) map[string]error {
	errs := map[string]error{}
	srcs, _ := filepath.Glob(filepath.Join(dir, "tst.*.c"))
	for _, src := range srcs {
		base := strings.TrimSuffix(filepath.Base(src), ".c")
		steps := [][]string{{"cc", "-O0", "-g", "-o", base + ".exe", base + ".c"}}
		if prov := strings.TrimPrefix(base, "tst.") + ".d"; exists(filepath.Join(dir, prov)) {
			obj := strings.TrimSuffix(prov, ".d") + ".o"
			steps = [][]string{
				{r.DTrace, "-C", "-x", "nolibs", "-h", "-s", prov},
				{"cc", "-O0", "-g", "-c", base + ".c"},
				{r.DTrace, "-C", "-x", "nolibs", "-G", "-o", obj, "-s", prov, base + ".o"},
				{"cc", "-O0", "-g", "-o", base + ".exe", base + ".o", obj},
			}
		}
		for _, step := range steps {
			cmd := exec.Command(step[0], step[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[base] = fmt.Errorf("building %s.exe: %s: %v: %s", base, filepath.Base(step[0]), err, firstLine(out))
				break
			}
		}
	}
	return errs
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
