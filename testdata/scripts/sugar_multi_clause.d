BEGIN
{
	if (x)
		y = 1;
}

END
{
	trace(y);
}

tick-1s
{
	if (y)
		exit(0);
}
