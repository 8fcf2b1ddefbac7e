/* args: -C -DMAX=3 -DNAME="bob" -DFLAG */
BEGIN
{
	x = MAX;
	y = NAME;
#ifdef FLAG
	z = 1;
#else
	z = 0;
#endif
}
