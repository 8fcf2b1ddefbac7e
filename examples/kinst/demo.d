/*
 * Trace every inlined call of req_valid() in the bundled demo binary:
 * kinst rewrites the entry and return probes into one probe per inline
 * copy, at the copy's entry and at each of its final exits.
 *
 *	kdtrace --kernel examples/kinst/demo -e -d -s examples/kinst/demo.d
 */
kinst::req_valid:entry
{
	self->ts = timestamp;
}

kinst::req_valid:return
/self->ts/
{
	@ns[probefunc] = quantize(timestamp - self->ts);
	self->ts = 0;
}

/* Not inlined anywhere: traced through fbt. */
kinst::req_free:entry
{
	@frees = count();
}
