BEGIN
{
	a = 1 < 2;
	b = 2 < 1;
	c = 1 <= 1;
	d = 2 >= 3;
	e = 3 > 2;
	f = 1 == 1;
	g = 1 != 1;
	h = -1 < 0;
	i = -1 < 0u;
	j = -1 == 0xffffffff;
	k = -1 == 0xffffffffffffffff;
	l = 1 && 2;
	m = 1 && 0;
	n = 0 || 0;
	o = 0 || 5;
	p = 1 ^^ 1;
	q = 1 ^^ 0;
	r = 0u || 1u;
	s = 5 > 3 && 2 < 1;
	t = 1 && x;
	u = x || 0;
}
