/* args: --kernel ../../examples/kinst/demo */
/* A kinst description in a list with others, and an if in the body: every sub-clause shares the expanded list. */
syscall::read:entry,
kinst::req_valid:entry,
kinst::req_submit:5
{
	if (probeprov == "kinst") {
		@k[probefunc] = count();
	} else {
		@s = count();
	}
}
