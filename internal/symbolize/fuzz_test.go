package symbolize_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/symbolize"
)

// FuzzParseMaps checks that any text parses or fails cleanly, and that
// what parses is well formed.
func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("00400000-00401000 r-xp 00001000 fe:01 1234   /usr/bin/x y (deleted)\n7ffd1e9f2000-7ffd1e9f4000 r-xp 00000000 00:00 0  [vdso]\n"))
	f.Add([]byte("0-1 rwxp 0 0:0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := symbolize.ParseMaps(data)
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Errorf("ParseMaps gave %+v", m)
			}
		}
	})
}
