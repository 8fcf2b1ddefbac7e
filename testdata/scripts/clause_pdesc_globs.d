syscall::*read*:entry,
fbt:kernel:vm_*:return,
syscall::[rw]rite:entry,
syscall::?ead:entry,
fbt::\*x:,
syscall::!foo:entry
{
	@[probefunc] = count();
}
