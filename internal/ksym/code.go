package ksym

import (
	"errors"
	"fmt"

	"github.com/kdtrace/kdtrace/internal/amd64"
)

// errNoText is Code's error for a table that has no way to read code.
var errNoText = errors.New("the kernel's code cannot be read")

// maxFunc bounds the code Code reads: a size taken from the next
// symbol's address can be huge where the table has gaps, and no kernel
// function comes near it.
const maxFunc = 1 << 20

// Code returns the code of function symbol s, which Lookup returned:
// Size bytes at Addr, less the padding after its last instruction where
// Size runs to the next symbol (Padded).
func (t *Table) Code(s Symbol) ([]byte, error) {
	switch {
	case t.text == nil:
		return nil, errNoText
	case !s.Func:
		return nil, fmt.Errorf("%s is not a function", s.Name)
	case t.zero:
		return nil, fmt.Errorf("the addresses of the kernel's symbols are hidden from this user (kptr_restrict)")
	case s.Size == 0:
		return nil, fmt.Errorf("the size of %s is not known", s.Name)
	case s.Size > maxFunc:
		return nil, fmt.Errorf("%s would be %d bytes long: its end is not known", s.Name, s.Size)
	}
	code, err := t.text(s.Addr, s.Size)
	if err != nil || !s.Padded {
		return code, err
	}
	if code, err = amd64.TrimPadding(code, s.Addr); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	return code, nil
}
