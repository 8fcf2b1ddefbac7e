/* args: --kernel ../../examples/kinst/demo */
kinst::req_submit:4
{
}
