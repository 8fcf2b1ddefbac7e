module github.com/kdtrace/kdtrace

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/arch v0.32.0
)

require golang.org/x/sys v0.49.0 // indirect
