//go:build !unix

package buildid

import "os"

// readSys reads the file at path.
func readSys(path string) ([]byte, error) { return os.ReadFile(path) }
