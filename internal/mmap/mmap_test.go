package mmap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := Map(f, 5)
	if err == ErrUnsupported {
		t.Skip("no mapping on this system")
	}
	if err != nil || string(b) != "hello" {
		t.Fatalf("Map = %q, %v", b, err)
	}
	if err := Unmap(b); err != nil {
		t.Fatal(err)
	}
	if _, err := Map(f, 0); err == nil {
		t.Error("Map of 0 bytes succeeded")
	}
}
