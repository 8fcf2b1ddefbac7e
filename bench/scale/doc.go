// Package scale measures kdtrace's compiler on a large script, as a user
// meets it: the built command, run on a script of many small clauses
// (internal/benchsrc.Clauses), timed from outside with its peak memory
// taken from the kernel's account of the process (rusage), so that the
// figures are those of the command a user runs.
//
//	go test ./bench/scale -run NONE -bench . -benchtime 3x
//	go test ./bench/scale -run NONE -bench . -benchtime 1x -clauses 1000
//
// Each benchmark reports the wall time (ns/op), the CPU time of the
// process (cpu-ms/op: user and system, GC workers included), its maximum
// resident set (maxrss-MB) and, for -G, the size of the DOF written
// (dof-MB). The scripts run with --btf none -Z, so that they compile
// alike on any machine, with or without the kernel's probes and types.
//
// By hand, the same runs are
//
//	go build -o /tmp/kdtrace ./cmd/kdtrace
//	go run ./bench/gensrc -clauses 120419 /tmp
//	/usr/bin/time -v /tmp/kdtrace --btf none -Z -e -s /tmp/scale.d
//	/usr/bin/time -v /tmp/kdtrace --btf none -Z -G -o /tmp/scale.dof -s /tmp/scale.d
//
// For profiles of the same work in-process, see the ScaleE and ScaleG
// benchmarks of cmd/kdtrace:
//
//	go test ./cmd/kdtrace -run NONE -bench Scale -benchmem -cpuprofile cpu.prof -memprofile mem.prof
package scale
