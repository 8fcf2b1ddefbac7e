BEGIN
/(x > 1/
{
	trace(x);
}
