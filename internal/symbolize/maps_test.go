package symbolize_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

func TestParseMaps(t *testing.T) {
	text := `00400000-00401000 r--p 00000000 fe:01 1234                               /usr/bin/fixture
00401000-00402000 r-xp 00001000 fe:01 1234                               /usr/bin/fixture
01d5c000-01d7d000 rw-p 00000000 00:00 0                                  [heap]
7f0000000000-7f0000001000 rw-p 00000000 00:00 0 
7f0000001000-7f0000002000 r-xp 00002000 08:02 99                         /tmp/a b/lib x.so (deleted)
7ffd1e9f2000-7ffd1e9f4000 r-xp 00000000 00:00 0                          [vdso]
`
	want := []symbolize.Mapping{
		{Start: 0x400000, End: 0x401000, Perms: "r--p", Dev: "fe:01", Inode: 1234, Path: "/usr/bin/fixture"},
		{Start: 0x401000, End: 0x402000, Perms: "r-xp", Offset: 0x1000, Dev: "fe:01", Inode: 1234, Path: "/usr/bin/fixture"},
		{Start: 0x1d5c000, End: 0x1d7d000, Perms: "rw-p", Dev: "00:00", Path: "[heap]"},
		{Start: 0x7f0000000000, End: 0x7f0000001000, Perms: "rw-p", Dev: "00:00"},
		{Start: 0x7f0000001000, End: 0x7f0000002000, Perms: "r-xp", Offset: 0x2000, Dev: "08:02", Inode: 99, Path: "/tmp/a b/lib x.so", Deleted: true},
		{Start: 0x7ffd1e9f2000, End: 0x7ffd1e9f4000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"},
	}
	got, err := symbolize.ParseMaps([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseMaps (-want +got):\n%s", diff)
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, tt := range []struct{ line, err string }{
		{"00400000 r--p 00000000 fe:01 1234 /x", `line 1: bad address range "00400000": "00400000 r--p 00000000 fe:01 1234 /x"`},
		{"00401000-00400000 r--p 00000000 fe:01 1234 /x", `line 1: bad address range "00401000-00400000": "00401000-00400000 r--p 00000000 fe:01 1234 /x"`},
		{"00400000-00401000 r--p zz fe:01 1234 /x", `line 1: bad offset "zz": "00400000-00401000 r--p zz fe:01 1234 /x"`},
		{"00400000-00401000 r--p 0 fe:01 x /x", `line 1: bad inode "x": "00400000-00401000 r--p 0 fe:01 x /x"`},
		{"00400000-00401000 r- 0 fe:01 1 /x", `line 1: bad permissions "r-": "00400000-00401000 r- 0 fe:01 1 /x"`},
		{"00400000-00401000 r--p 0", `line 1: 3 fields, not 5: "00400000-00401000 r--p 0"`},
	} {
		_, err := symbolize.ParseMaps([]byte(tt.line + "\n"))
		if err == nil || err.Error() != tt.err {
			t.Errorf("ParseMaps(%q) = %v, want %s", tt.line, err, tt.err)
		}
	}
}
