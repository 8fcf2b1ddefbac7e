1
{
	trace(1);
}

42, BEGIN, 0x10
{
	trace(epid);
}
