BEGIN
{
	a = 10;
	b = 10u;
	c = 10l;
	d = 10ul;
	e = 10ll;
	f = 10ull;
	g = 10U;
	h = 10L;
	i = 10UL;
	j = 10LL;
	k = 10ULL;
	l = 010;
	m = 010u;
	n = 010l;
	o = 0x10;
	p = 0x10u;
	q = 0x10ul;
	r = 0X1fULL;
	s = 0xABCdef;
	t = 0;
	u = 00;
	v = 0u;
}
