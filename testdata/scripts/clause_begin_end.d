BEGIN
{
	start = timestamp;
}

END
{
	printf("%d\n", timestamp - start);
}

BEGIN, END
{
}
