BEGIN
{
	a = $target;
	b = $$target;
	c = $target + 1;
}
