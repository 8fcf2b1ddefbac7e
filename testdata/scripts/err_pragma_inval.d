#pragma D nosuchpragma foo
BEGIN
{
	x = 1;
}
