fbt::vm_fault:entry,
fbt::vm_fault:return,
kinst::vm_fault:4
/execname != "init" && (arg0 & 0xff) == 0/
{
	@[probename] = count();
}

syscall:freebsd:open*:entry
/self->n < 10/
{
	self->n++;
}
