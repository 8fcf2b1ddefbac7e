BEGIN
{
	x = 1;
}
#bogus directive
