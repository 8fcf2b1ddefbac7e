package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheInput checks what the link is for: in a module laid out as
// this one, with this package and its link, a test that skipped for
// want of the corpus is run again, not replayed from go test's cache,
// once ../shared/corpus appears beside the module.
func TestCacheInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test three times")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip(err)
	}
	link, err := os.Readlink(filepath.Join("..", "..", "testdata", "corpus"))
	if err != nil {
		t.Fatalf("testdata/corpus is not a link: %v", err)
	}
	src, err := os.ReadFile("corpus.go")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	files := map[string]string{
		"go.mod":                    "module corpuscache\n\ngo 1.26\n",
		"internal/corpus/corpus.go": string(src),
		"internal/corpus/x_test.go": `package corpus

import "testing"

func TestSeesCorpus(t *testing.T) {
	if dir, ok := DTraceTests(); !ok {
		t.Skipf("no corpus at %s", dir)
	}
}
`,
	}
	for name, data := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(link, filepath.Join(repo, "testdata", "corpus")); err != nil {
		t.Fatal(err)
	}
	goTest := func() string {
		t.Helper()
		cmd := exec.Command("go", "test", "-v", "./internal/corpus")
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := goTest(); !strings.Contains(out, "--- SKIP") {
		t.Fatalf("without the corpus:\n%s", out)
	}
	if out := goTest(); !strings.Contains(out, "--- SKIP") || !strings.Contains(out, "(cached)") {
		t.Fatalf("without the corpus, run again: not replayed from the cache:\n%s", out)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "shared", "corpus", "dtrace-tst", "tst", "common"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := goTest(); strings.Contains(out, "(cached)") || !strings.Contains(out, "--- PASS") {
		t.Errorf("with the corpus there, go test replayed the skip:\n%s", out)
	}
}
