BEGIN
{
	a = (int)x;
	b = (char *)arg0;
	c = (unsigned long)x + 1;
	d = (struct foo *)p;
	e = (int **)q;
	f = (void)x;
	g = (string)arg1;
	h = (long)(int)x;
	i = (int (*)(int))fp;
	j = (char [4])x;
	k = (userland int *)arg2;
	l = (const volatile int *)arg3;
	m = (int)-x;
	n = (uint8_t)x;
}
