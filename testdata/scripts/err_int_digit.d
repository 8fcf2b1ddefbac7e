BEGIN
{
	x = 08;
}
