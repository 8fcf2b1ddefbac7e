tick-1s
/x > 2/
{
	if (y)
		trace(1);
}
