int char x;

BEGIN
{
	x = 1;
}
