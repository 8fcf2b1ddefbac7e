package linux

import "golang.org/x/sys/unix"

// onFirstCPU moves the calling thread, locked to it, to the first CPU
// it may run on, and returns what moves it back.
func onFirstCPU() (restore func()) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return func() {}
	}
	for cpu := 0; cpu < 1024; cpu++ {
		if old.IsSet(cpu) {
			var one unix.CPUSet
			one.Set(cpu)
			if unix.SchedSetaffinity(0, &one) != nil {
				break
			}
			return func() { unix.SchedSetaffinity(0, &old) }
		}
	}
	return func() {}
}
