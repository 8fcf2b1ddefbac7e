BEGIN
{
	a = x ? y : z;
	b = x > 0 ? "pos" : x < 0 ? "neg" : "zero";
	c = (x, y);
	d = (x = 1, y = 2, z);
	e = x ? (y, z) : w;
	f = (x ? y : z) + 1;
}
