BEGIN
{
	trace(1);
	printf("%d %s\n", 1, "two");
	x = strlen("abc");
	y = copyinstr(arg0, 32);
	z = rand();
	stack();
	ustack(5, 10);
	exit(0);
	w = strjoin(strjoin("a", "b"), "c");
	tracemem(arg0, 16);
	v = walltimestamp;
}
