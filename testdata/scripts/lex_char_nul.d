BEGIN
{
	a = '\0';
	b = 'a\0';
	c = '\0a';
}
