BEGIN
{
	if (x) {
	}
	if (y) {
	} else {
		z = 1;
	}
	if (z) ;
}
