BEGIN
{
	x = $$1;
}
