BEGIN
{
	if (0) {
		exit(1);
	} else {
		if (0) {
			exit(1);
		} else {
			exit(0);
		}
		exit(1);
	}
	exit(1);
}
