// Package record is DTrace's record format: how the kernel lays out
// what an enabled probe's actions record, the descriptions a consumer
// gets of that layout, and the bytes of a per-CPU buffer. It is the
// contract between whatever runs a program (FreeBSD's kernel, kdtrace's
// BPF backend or its DIF VM) and the consumer that prints the records.
//
// # Data flow
//
//	enabling.Load ──► *enabling.Program ──► Layout.Add(ECB, probe) ──► *EProbe (EPID, records)
//	                                                                  │
//	    values of one firing (one per action) ──► Buffer.Write ◄──────┘
//	                                                  │
//	                                  []byte, a CPU's buffer ──► Next ──► Firing by Firing ──► consumer
//
// Layout.Add does what FreeBSD's kernel does when an ECB description
// matches a probe (dtrace.c: dtrace_ecb_create, dtrace_ecb_action_add,
// dtrace_ecb_aggregation_create, dtrace_ecb_resize): it numbers the ECB
// (its EPID, from 1), sizes each action's record and aligns it to the
// largest power of two up to 8 that divides its size, places the records
// one after the other behind the 12-byte dtrace_rechdr_t (EPID and
// timestamp), and places each aggregation's key tuple and data in the
// space beyond the ECB's size, where the kernel builds the key before it
// copies it into the aggregation buffer. The descriptions are those of
// DTRACEIOC_EPROBE (dtrace_eprobedesc_t: records without aggregations
// and their tuples), DTRACEIOC_AGGDESC (dtrace_aggdesc_t: the tuple and
// the aggregation, offsets from the aggregation's base, where its
// 4-byte dtrace_aggid_t sits) and DTRACEIOC_FORMAT (one format string
// per printf-like action, numbered from 1).
//
// Buffer.Write writes one firing as dtrace_probe writes it into a
// switching buffer: 4-byte DTRACE_EPIDNONE words until the offset suits
// the ECB's alignment, a drop if the ECB's needed size does not fit,
// then the header and each record: integers of their size, strings up
// to their NUL and zeroes to the record's end, other by-reference data
// byte for byte. Next walks a buffer back into firings, skipping the
// padding words, with the descriptions a Describer gives; Layout is one.
// A backend hands a consumer a round of them as CPUBuffers, each with
// the firings its CPU dropped.
//
// AggBuffer is a CPU's aggregation buffer, which the kernel fills as
// dtrace_aggregate does: when a firing reaches an aggregating action,
// the backend calls Aggregate with the values of the firing's actions
// so far; the key is built from the tuple actions' values as their
// records lay them out, the entry for it found or made (min and max
// start at their extremes, lquantize and llquantize keep their
// parameters in the first word) and the value added with the
// function's dtrace_aggregate_* rule (a tuple action of no size is the
// increment). Its bytes, entries of AggDesc.Size behind the aggregation
// ID on 8-byte boundaries, are what DTRACEIOC_AGGSNAP hands the
// consumer; a snapshot empties the buffer, the consumer keeps the sum.
package record
