BEGIN
{
	a = 1 + 2;
	b = 10 - 3;
	c = 6 * 7;
	d = 20 / 3;
	e = 20 % 3;
	f = -7 / 2;
	g = -7 % 2;
	h = 1 - 2;
	i = 0x7fffffff + 1;
	j = 1 + 2 * 3 - 4 / 2;
	k = (1 + 2) * 3;
	l = 1 + 2 * x;
	m = x + 1 + 2;
	n = 0xffffffffffffffff + 1;
	o = 7u / 2;
	p = -7u / 2;
	q = 2 * 3 * x * 4;
}
