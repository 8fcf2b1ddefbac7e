BEGIN
{
	a = `ticks;
	b = kernel`hz;
	c = `max_ncpus + 1;
	d = &`tick;
	e = genunix.so`foo;
	f = *`rootvnode;
}
