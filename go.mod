module github.com/kdtrace/kdtrace

go 1.26.0

require (
	github.com/cilium/ebpf v0.22.0
	github.com/google/go-cmp v0.7.0
	golang.org/x/arch v0.32.0
	golang.org/x/sys v0.49.0
)
