//go:build !unix

package mmap

import "os"

// Map fails: files are read instead.
func Map(*os.File, int64) ([]byte, error) { return nil, ErrUnsupported }

// MapFile fails: files are read instead.
func MapFile(string) ([]byte, error) { return nil, ErrUnsupported }

// Unmap does nothing.
func Unmap([]byte) error { return nil }
