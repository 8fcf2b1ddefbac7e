package cachefile

import "testing"

func TestFromRoot(t *testing.T) {
	for _, tt := range []struct{ path, image, recorded string }{
		{"/proc/12/root/usr/bin/ls", "/proc/12/root/usr/bin/ls", "<root>/usr/bin/ls"},
		{"/usr/lib/debug/.build-id/ab/cd.debug", "/proc/12/root/usr/bin/ls", "/usr/lib/debug/.build-id/ab/cd.debug"},
		{"/proc/13/root/usr/bin/ls", "/proc/12/root/usr/bin/ls", "/proc/13/root/usr/bin/ls"},
		{"/proc/12/rootfs/x", "/proc/12/rootfs/x", "/proc/12/rootfs/x"},
		{"/proc/self/root/x", "/proc/self/root/x", "/proc/self/root/x"},
		{"/proc//root/x", "/proc//root/x", "/proc//root/x"},
		{"/usr/bin/ls", "/usr/bin/ls", "/usr/bin/ls"},
	} {
		got := FromRoot(tt.path, tt.image)
		if got != tt.recorded {
			t.Errorf("FromRoot(%q, %q) = %q, want %q", tt.path, tt.image, got, tt.recorded)
		}
		// Read back for the same program in another process.
		other := "/proc/99/root/usr/bin/ls"
		want := tt.path
		if got != tt.path {
			want = "/proc/99/root" + got[len(rootMark):]
		}
		if back := InRoot(got, other); back != want {
			t.Errorf("InRoot(%q, %q) = %q, want %q", got, other, back, want)
		}
	}
}
