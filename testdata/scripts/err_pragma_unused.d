#pragma D binding "1.0" nosuchident
BEGIN
{
	x = 1;
}
