#pragma D binding 1.0 foo
BEGIN
{
	x = 1;
}
