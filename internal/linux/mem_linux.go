package linux

import "golang.org/x/sys/unix"

// MemLimit is the most memory the buffers of one size option (bufsize,
// aggsize, dynvarsize, specsize) may take: a 128th of the machine's
// memory, as FreeBSD's dtrace_buffer_alloc allows a buffer over all
// CPUs; 0 if the machine does not say.
func MemLimit() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit) / 128
}
