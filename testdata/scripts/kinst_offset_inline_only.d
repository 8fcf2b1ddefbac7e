/* args: --kernel ../../examples/kinst/demo */
kinst::req_valid:3
{
}
