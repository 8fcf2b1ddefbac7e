/* args: --kernel ../../examples/kinst/demo */
/* Patterns, every-instruction and other providers are left as written. */
kinst::req_*:entry,
kinst::req_submit:,
fbt::req_valid:entry
{
}
