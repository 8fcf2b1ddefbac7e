BEGIN
{
	if (x)
		y = 1;
	if (y == 2)
		trace(y);
	else
		trace(x);
}
