BEGIN
{
	y = 1;
	x = y / 0;
}
