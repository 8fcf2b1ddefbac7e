BEGIN
{
	if (1)
		a = 1;
	if (2 + 3 == 5)
		b = 1;
	if (0)
		c = 1;
	else
		c = 2;
}
