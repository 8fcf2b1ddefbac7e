syscall:::entry
{
	@calls[probefunc] = count();
	@bytes[execname, pid] = sum(arg2);
	@ = count();
	@[probefunc] = quantize(arg0);
	@lat = avg(timestamp - self->ts);
	@mx = max(arg0);
	@l = lquantize(arg0, 0, 100, 10);
}

END
{
	printa(@calls);
	printa("%s %@d\n", @bytes);
	trunc(@calls, 10);
	clear(@);
	normalize(@lat, 1000);
}
