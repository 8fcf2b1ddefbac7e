syscall::open:entry
{
	self->path = copyinstr(arg0);
	self->ts = timestamp;
	this->flags = arg1;
	printf("%s %d\n", self->path, this->flags);
	@opens[execname, self->path] = count();
}
