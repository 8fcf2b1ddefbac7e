BEGIN
{
	a = 'a';
	b = '\n';
	d = 'ab';
	e = 'abcd';
	f = 'abcdefgh';
	g = '\377';
	h = '\x41';
	i = '\\';
	j = '\'';
	k = '"';
	l = ' ';
	m = '\t\t';
}
