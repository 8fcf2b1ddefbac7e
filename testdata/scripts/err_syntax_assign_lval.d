BEGIN
{
	a + b = c;
}
