BEGIN
{
	if (0) {
		n = 1;
	} else {
		n = 0;
	}
	exit(n)
}
