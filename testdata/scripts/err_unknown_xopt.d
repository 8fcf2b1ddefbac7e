/* args: -x nosuch */
BEGIN
{
	x = 1;
}
