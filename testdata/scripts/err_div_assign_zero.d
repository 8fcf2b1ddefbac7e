BEGIN
{
	y /= 0;
}
