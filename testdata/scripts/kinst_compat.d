/* args: --kernel ../../examples/kinst/demo -x kinstcompat */
/* The reference implementation's rules: entry at the first range, return at range ends. */
kinst::req_valid:entry,
kinst::req_valid:return
{
	@[probefunc, probename] = count();
}
