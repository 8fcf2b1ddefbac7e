/* args: --kernel ../../examples/kinst/demo */
/* req_free is never inlined: fbt. req_bytes is inlined and also out of line: both. */
kinst::req_free:entry
{
	trace(arg0);
}

kinst::req_bytes:return
{
	@ = count();
}
