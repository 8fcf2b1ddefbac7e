BEGIN
{
	c = 'a
	';
}
