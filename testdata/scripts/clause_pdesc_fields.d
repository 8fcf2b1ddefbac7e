syscall:kernel:read:entry,
fbt::vm_fault:return,
read:entry,
kinst:::
{
	trace(probefunc);
}

profile:::tick-1s, vm_fault:, tick-10ms
{
	n++;
}
