package types

// The layout libctf's ctf_add_member gives the members dt_decl_member
// adds, which is not C's: the parser, to fold sizeof and offsetof of the
// types a script defines, and the type checker both lay out structs so.

// CTFMemberOffset returns the byte offset of a struct member aligned to
// align that follows members ending at end bits: the first byte after
// them, rounded up to align.
func CTFMemberOffset(end, align int64) int64 {
	a := max(align, 1)
	return ((end+7)/8 + a - 1) / a * a
}

// BitFieldBytes is the size of dt_decl_member's integer type of a
// bit-field of the given width: its bytes rounded up to a power of two
// (ctf_add_encoded), which is also its alignment. The bytes are counted
// so that no width overflows.
func BitFieldBytes(bits int64) int64 {
	n := int64(1)
	for bits > 8 && n < (bits-1)/8+1 {
		n *= 2
	}
	return n
}
