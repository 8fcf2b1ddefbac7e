syscall::read:return
/self->ts/
{
	if (arg0 > 0) {
		@bytes[execname] = sum(arg0);
	} else if (arg0 < 0) {
		@errors[execname, errno] = count();
	}
	self->ts = 0;
}
