BEGIN
{
	a[1] = 1;
	a[1, 2] = 2;
	a["x", 2, y] = 3;
	b = a[k1, k2, k3];
	c[a[1]] = a[a[2]];
	d = args[0];
	e = regs[R_PC];
	f = x[1][2];
}
