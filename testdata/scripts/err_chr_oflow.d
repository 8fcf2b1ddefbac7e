BEGIN
{
	c = 'abcdefghi';
}
