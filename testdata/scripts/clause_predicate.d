syscall::read:entry
/pid == 1/
{
	@c[execname] = count();
}

syscall::write:entry
/execname == "sh" && arg2 > 100 || self->traced/
{
	trace(arg2);
}

BEGIN
/x/
{
	trace(x);
}
