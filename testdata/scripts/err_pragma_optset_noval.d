#pragma D option nosuchflag
BEGIN
{
	x = 1;
}
