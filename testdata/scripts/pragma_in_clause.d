BEGIN
{
	x = 1;
#pragma D option quiet
	y = 2;
}
