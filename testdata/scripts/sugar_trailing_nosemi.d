BEGIN
{
	if (1) {
		i = 1;
		exit(0)
	}
}

END
{
	if (i) { trace(i); } else { trace(0) }
	j = 2
}
