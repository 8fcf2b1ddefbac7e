BEGIN
{
	x = 1lu;
}
