//go:build !unix

package cachedir

import (
	"errors"
	"os"
	"time"
)

// Open fails: without owners and modes to check, no directory can be
// trusted, and kdtrace goes without its cache.
func Open(string) (*Dir, error) { return nil, errors.ErrUnsupported }

// The methods of a Dir, which Open never returns here.

func (*Dir) Close() error                                { return errors.ErrUnsupported }
func (*Dir) Open(string) (*os.File, error)               { return nil, errors.ErrUnsupported }
func (*Dir) WriteFile(string, []byte) error              { return errors.ErrUnsupported }
func (*Dir) Lstat(string) (Stat, error)                  { return Stat{}, errors.ErrUnsupported }
func (*Dir) Touch(string, time.Time) error               { return errors.ErrUnsupported }
func (*Dir) Remove(string) error                         { return errors.ErrUnsupported }
func (*Dir) Names() ([]string, error)                    { return nil, errors.ErrUnsupported }
func (*Dir) Sub(string) (*Dir, error)                    { return nil, errors.ErrUnsupported }
func (*Dir) CreateTemp(string) (*os.File, error)         { return nil, errors.ErrUnsupported }
func (*Dir) Rename(string, string) error                 { return errors.ErrUnsupported }
func (*Dir) RemoveDir(string) error                      { return errors.ErrUnsupported }
func (*Dir) SetTimes(string, time.Time, time.Time) error { return errors.ErrUnsupported }
