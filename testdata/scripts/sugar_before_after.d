syscall::read:entry, syscall::write:entry
{
	a = 1;
	b = 2;
	if (arg0 == 0) {
		c = 3;
	}
	d = 4;
	e = 5;
}
