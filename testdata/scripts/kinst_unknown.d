/* args: --kernel ../../examples/kinst/demo */
kinst::no_such_function:entry
{
}
