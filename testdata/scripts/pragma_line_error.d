#line 100 "renamed.d"
BEGIN
{
	x = 1;
	y = ;
}
