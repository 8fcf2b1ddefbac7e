#pragma D option nosuchoption=1
BEGIN
{
	x = 1;
}
