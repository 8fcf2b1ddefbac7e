// Package printf parses and checks the format strings of dtrace's
// printf-like actions: printf, printa, system and freopen.
//
// Data flows in two steps, as in libdtrace's dt_printf.c. Parse splits a
// format into literal text and conversions (%d, %-*s, %@u, %k, …) and
// rejects what dtrace cannot print, with dtrace's D_SYNTAX messages. The
// checker then describes the call's arguments as Args and calls
// CheckCall, which applies the action's rules (a format that is a string
// constant, printa's aggregation arguments) and Format.Check, which
// matches each conversion with the value it consumes: '*' widths and
// precisions take integers, %s takes a string or char array, %k a stack,
// and so on, with dtrace's D_PRINTF_* and D_PRINTA_* tags and messages.
//
// Checking also chooses the printf(3) conversion each value is printed
// with (Conv.Out: %d of a long becomes %lli, of an unsigned int %u),
// which is how dtrace passes an argument's size and signedness to the
// consumer. Format.String writes the format the way dtrace records it in
// DOF; the consumer parses that string again to print records.
//
// Errors are *Error values: a tag, dtrace's message and the index of the
// argument at fault, so that the checker can give them a position.
package printf
