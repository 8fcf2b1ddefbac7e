BEGIN
{
	x = 1 # 2;
}
