BEGIN
{
	x = 0 ? y : z = 3;
}
