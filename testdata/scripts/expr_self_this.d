syscall::read:entry
{
	self->ts = timestamp;
	this->fd = arg0;
	self->paths[arg0] = 1;
	self->ts = 0;
	this->x = this->fd + self->ts;
	self->a->b = 1;
}
