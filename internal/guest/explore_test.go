package guest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestExplore(t *testing.T) {
	busybox, _ := Available()
	cache, _ := CacheDir()
	img, err := FetchKernel(context.Background(), Debian12, cache)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kdtrace := filepath.Join(dir, "kdtrace")
	build := exec.Command("go", "build", "-o", kdtrace, "github.com/kdtrace/kdtrace/cmd/kdtrace")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	readzero := filepath.Join(dir, "readzero")
	exec.Command("gcc", "-static", "-O2", "-o", readzero, "testdata/readzero.c").Run()
	script, _ := os.ReadFile("/tmp/explore.sh")
	res, err := Run(context.Background(), Config{Image: img, Busybox: busybox,
		Files:  map[string]string{"bin/kdtrace": kdtrace, "bin/readzero": readzero},
		Script: string(script)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v\n%s", res.Wall, res.Output)
}
