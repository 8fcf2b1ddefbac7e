BEGIN
{
	x = 1;
}

END
/x > 1/