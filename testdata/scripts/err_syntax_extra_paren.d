BEGIN
{
	x = (a + b));
}
