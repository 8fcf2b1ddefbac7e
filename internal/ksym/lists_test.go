package ksym_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

func TestReadFilterFunctions(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []ksym.Name
		err        bool
	}{
		{"empty", "", nil, false},
		{
			"kernel and modules",
			"vfs_read\nvfs_write\next4_read_inline_data [ext4]\nvfs_read [mod]\n",
			[]ksym.Name{{Module: "vmlinux", Name: "vfs_read"}, {Module: "vmlinux", Name: "vfs_write"},
				{Module: "ext4", Name: "ext4_read_inline_data"}, {Module: "mod", Name: "vfs_read"}},
			false,
		},
		{"blank line", "a\n\nb\n", []ksym.Name{{Module: "vmlinux", Name: "a"}, {Module: "vmlinux", Name: "b"}}, false},
		{"unclosed module", "f [mod\n", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []ksym.Name
			err := ksym.ReadFilterFunctions(strings.NewReader(tt.text), func(m string, name []byte) {
				got = append(got, ksym.Name{Module: m, Name: string(name)})
			})
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want one: %v", err, tt.err)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}
