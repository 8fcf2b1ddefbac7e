BEGIN
{
	x = $pid;
	y = x / 0;
}
