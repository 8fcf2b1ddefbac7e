BEGIN
{
	a = sizeof(int);
	b = sizeof(char);
	c = sizeof(long long);
	d = sizeof(int *);
	e = sizeof "abc";
	f = sizeof("ab");
	g = sizeof(x);
	h = sizeof x;
	i = sizeof(self->x);
	j = sizeof(int[10]);
	k = sizeof(struct { int a; char b; });
	l = sizeof(uint64_t);
	m = sizeof(string);
}
