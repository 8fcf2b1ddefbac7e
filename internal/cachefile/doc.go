// Package cachefile is what kdtrace's caches share: the encoding of
// their files (little-endian integers, strings as a uint32 length then
// bytes, tables as an 8-byte count then fixed-size records read in
// place, a CRC-32 of the whole), writing a file whole or
// not at all, and trimming the directory as Go's build cache does.
//
// # Data flow
//
//	inline index, type index, unit table, BTF index ──► Encoder ──► StoreFile ──► <cache dir>/<build-id>[.types|.units|.btf]
//	                                                                                  │ (mapped by the caller)
//	                        Decoder, Table (records read in place) ◄───────────────────┘   Used refreshes its mtime
//
// Each cache keeps its own header, magic and version; this package
// knows nothing of what the records mean. The directory is an
// internal/cachedir.Dir: every file is reached through its descriptor,
// without following links.
package cachefile
