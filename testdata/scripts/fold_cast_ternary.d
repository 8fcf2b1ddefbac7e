BEGIN
{
	a = (char)-1;
	b = (int)(char)-1;
	c = (long)-1;
	d = (unsigned)-1;
	e = (unsigned char)256;
	f = (short)0x12345;
	g = (unsigned long)-1;
	h = (int)0xffffffffff;
	i = (uint8_t)0x1ff;
	j = 1 ? x : y;
	k = 0 ? 1 : 2;
	l = 1 ? 2 : 3;
	m = (1 + 1) ? "yes" : "no";
	n = x ? 1 + 1 : 2 * 2;
	o = (char *)0;
	p = (unsigned char)-1 + 1;
}
