package guest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeaderPackages(t *testing.T) {
	for _, tc := range []struct {
		k    Kernel
		want []string
		err  string
	}{
		{k: Debian12, want: []string{
			"linux-headers-6.1.0-56-amd64=6.1.192-2",
			"linux-headers-6.1.0-56-common=6.1.192-2",
			"linux-kbuild-6.1=6.1.192-2",
		}},
		{k: Kernel{Release: "6.12.48+deb13-amd64", Version: "6.12.48-1"},
			err: `release "6.12.48+deb13-amd64" is not Debian's <version>-<abi>-<flavour>`},
		{k: Kernel{Release: "6.1.0-56-cloud-amd64", Version: "6.1.192-2"}, want: []string{
			"linux-headers-6.1.0-56-cloud-amd64=6.1.192-2",
			"linux-headers-6.1.0-56-common=6.1.192-2",
			"linux-kbuild-6.1=6.1.192-2",
		}},
	} {
		got, err := tc.k.headerPackages()
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.k.Release, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.k.Release, diff)
		}
	}
}
