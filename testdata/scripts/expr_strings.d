BEGIN
{
	a = "";
	b = "hello, world";
	c = "it's";
	d = "a b  c";
	e = "with /* not a comment */ inside";
	f = "~!@#$%^&*()_+`-={}|[]:;<>?,./";
	g = a == "x";
	h = "a" == "a";
}
