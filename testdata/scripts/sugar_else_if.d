BEGIN
{
	if (x == 1)
		y = 10;
	else if (x == 2)
		y = 20;
	else if (x == 3) {
		y = 30;
	} else
		y = 0;
}
