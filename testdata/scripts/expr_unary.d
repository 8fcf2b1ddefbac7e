BEGIN
{
	a = -x;
	b = +x;
	c = !x;
	d = ~x;
	e = *p;
	f = &x;
	g = - -x;
	h = !!x;
	i = -~!x;
	j = *&x;
	k = **pp;
	l = -(x + 1);
}
