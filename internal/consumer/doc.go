// Package consumer is dtrace(1)'s consumer: it reads the buffers a
// tracing backend fills in DTrace's record format (package record) and
// prints what they hold the way dtrace prints it, byte for byte.
//
// # Data flow
//
//	backend ──► record.CPUBuffer (a CPU's record.Buffer bytes) ──► Consumer.ConsumeRound ──► record.Next ──► firings
//	                                                   │
//	     record.Describer (EPIDs, formats, probes) ────┤ each record decoded once (model.go: a datum)
//	                                                   │ exit(), library actions, system(), freopen() carried out
//	                                                   ▼
//	        formatter (Config.Format): text (text.go, aggprint.go) or JSON (json.go)
//	                                                   │
//	                                                   ▼
//	        io.Writer; exit()'s status ──► Consumer.Exited; Finish
//
// Consume does what libdtrace's dt_consume_cpu does with dtrace(1)'s
// callbacks chew and chewrec: each firing starts, unless the quiet
// option is set, with "%3d %6d %32s " (CPU, probe ID, FUNCTION:NAME),
// printed after a heading the first time; each record is then printed
// by its action: an integer of 1, 2, 4 or 8 bytes as dtrace prints it
// (" %3d", " %5d", " %8d", " %16lld", or bare with quiet), other data
// as dt_print_bytes does (a string when the bytes are printable up to
// their NUL and nothing but NULs follow, else a hex dump with the
// printable characters beside it), printf() through its format
// (dt_printf_format: every printf(3) conversion plus dtrace's %a %A %S
// %C %k %Y %T %P %I), sym()/mod()/usym()/umod()/uaddr(), stack() and
// ustack() through Symbols, system() through Config.System, and exit()'s
// status kept for Exited. print()'s record names its value's type in its
// format, a reference into the compiler's types.Table (Config.Types), as
// dtrace's names a CTF type; the value is printed as dtrace_print prints
// it: its type, then integers in hexadecimal, characters quoted,
// character arrays as strings, arrays in brackets, structs and unions a
// member a line with types, names and bit-field widths, enums by name.
// freopen() sends what the actions print to a file (appending) and
// freopen("") back, as FreeBSD's dtrace_freopen: the heading, the probe
// columns and newlines dtrace(1) prints itself stay on Config.Out.
// The firing ends with a newline unless quiet.
// With Config.Flowindent (-F) the lines are dtrace's "%3d %-41s ": the
// function, indented and unindented by the probes named entry and
// return, as dt_flowindent decides.
// Finish writes the newline dtrace writes when it stops.
//
// # Aggregations
//
//	backend ──► record.AggBuffer bytes of a CPU ──► Consumer.Aggregate (a snapshot, then the backend resets its buffer)
//	                                                   │ entries merged by variable and key across CPUs and snapshots
//	                                                   ▼
//	          printa() records, clear()/trunc()/normalize()/denormalize()/setopt() records, Finish
//
// Aggregate does what dt_aggregate_snap_cpu does with a CPU's
// aggregation buffer: each entry (its aggregation ID, key records and
// data, as record.AggDesc describes them) is merged into the
// consumer's entry for the same variable and key with the aggregating
// function (sum, min, max, stddev's 128-bit sum of squares, the
// quantizations bucket by bucket), or added. dtrace snapshots before it
// consumes a round of buffers; a backend calls Aggregate, then Consume.
// The library actions act on those entries: clear() zeroes a variable's
// data, trunc() keeps its n largest (or -n smallest) values, normalize()
// and denormalize() set the divisor its values print with, setopt()
// sets quiet and the sort options. printa() prints a variable's
// entries, sorted as dt_aggregate_qsort sorts them (variable, value,
// key; aggsortkey, aggsortrev, aggsortkeypos, aggsortpos), without a
// format as dt_print_aggs does (a newline, then each entry's keys by
// record size and its value: " %16lld", avg's average, stddev's
// deviation, quantize's, lquantize's and llquantize's histograms with
// dtrace's rows, bars and zero rows), or with one (%@ the value,
// other conversions the keys); several variables are joined on their
// keys, with zeroes where a variable lacks one. The options that draw
// them are dtrace's: aggzoom (bars scaled to the largest count),
// agghist (sum() and count() as bars), aggpack (quantizations packed in
// a line), encoding=utf8 (bars of block elements). Finish prints, after
// its newline, every entry printa() has not printed, in one sorted
// walk, as dtrace_aggregate_print does when dtrace exits.
//
// ConsumeRound takes one buffer per CPU (record.CPUBuffer) and prints them in
// dtrace_consume's order: the BEGIN probe's records first, then CPU by
// CPU, the END probe's CPU last. The firings of libdtrace's ERROR clause
// (ErrorClause, user argument dof.ECBError) are not printed but reported
// on Config.Err in dtrace's words, as dt_handle_err reports them; drops
// likewise.
//
// # Output formats
//
// The walk over a firing's records is the format's no more than the
// records are: it decodes each record once into a datum (model.go: an
// integer, data, a stack's frames, a symbol, printf()'s text with its
// arguments typed on demand, exit()'s status), carries out the actions
// that act rather than record (exit(), the library actions, system(),
// freopen()), and hands the firing's head, each datum, each printa(),
// each ERROR clause's fault and each drop to a formatter. Aggregation
// entries are merged, sorted and their keys decoded the same way for
// every format. The text formatter (text.go, and aggprint.go for
// aggregations) prints dtrace's bytes, as above.
//
// With Config.Format JSON (kdtrace -O json, --libxo json) the consumer
// writes JSON Lines instead of text, from the same data (json.go): an
// object of type "probe" for each firing (CPU, timestamp, EPID, the
// probe's ID and names, and each action's record typed: integers as
// numbers, D strings as strings, printf()'s output with its arguments
// typed by their conversions, stacks as arrays of frames, exit()'s
// status), an object of type "aggregation" for each aggregation printa()
// prints and, at Finish, for each it has not (the entries in dtrace's
// order, each with its keys and value, or the buckets of a
// quantization), and objects of type "error" and "drop" for the ERROR
// clause's reports and the drops, which still go to Config.Err in
// dtrace's words. Every object carries "version" (JSONVersion).
// ReportDrop reports the drops a
// backend counts outside the buffers (dynamic variables,
// speculations) the same way. kdtrace(1)'s JSON OUTPUT section is the
// schema.
//
// # Adding an output format
//
// A format is a type that implements the formatter interface
// (format.go) in a file of its own, rendering the data the walk hands
// it; it is registered by a Format constant and a row of the formats
// table in format.go, which gives its name. dtrace(1)'s oformat option
// names it (ParseFormat); the option's values are listed in package
// option, and kdtrace(1) describes them. Nothing else in the consumer,
// the backend or package dtrace changes.
package consumer
