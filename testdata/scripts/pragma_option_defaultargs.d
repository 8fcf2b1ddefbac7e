#pragma D option defaultargs

BEGIN
{
	x = $1;
}
