BEGIN
{
	x = 1;
	exit(0)
}

END
{
	trace(x)
}

tick-1s { x++ }
