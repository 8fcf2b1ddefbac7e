BEGIN
{
	a = sizeof(int) + sizeof x;
	b = stringof(arg0) == "x";
	c = (string)arg0;
	d = xlate<int>(x);
	e = &x->y;
	f = *x[1];
	g = -sizeof(char);
	h = !stringof x;
}
