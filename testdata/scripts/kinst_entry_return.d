/* args: --kernel ../../examples/kinst/demo */
/*
 * kinst entry and return probes of an always-inline function, rewritten
 * into one probe per inline copy (examples/kinst/demo).
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
