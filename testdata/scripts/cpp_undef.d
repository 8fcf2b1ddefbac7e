/* args: -C -DFOO=1 -DBAR=2 -UFOO */
BEGIN
{
#ifdef FOO
	x = FOO;
#else
	x = 0;
#endif
	y = BAR;
}
