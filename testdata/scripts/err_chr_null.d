BEGIN
{
	c = '';
}
