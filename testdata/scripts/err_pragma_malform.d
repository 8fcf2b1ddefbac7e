#pragma D option
BEGIN
{
	x = 1;
}
