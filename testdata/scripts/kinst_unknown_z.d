/* args: --kernel ../../examples/kinst/demo -Z */
kinst::no_such_function:entry,
kinst::req_valid:entry
{
}
