BEGIN
{
	x = 1;
	if (x > 0) {
		y = 2;
		z = 3;
	}
	exit(0);
}
