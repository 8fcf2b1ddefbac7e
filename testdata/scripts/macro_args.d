/* args: -s $FILE foo 42 +5 0x10 bar-baz "quoted" */
BEGIN
{
	a = $1;
	b = $2;
	c = $3;
	d = $4;
	e = $5;
	f = $6;
	g = $$1;
	h = $$2;
	i = $2 + 1;
	j = $$0 == "x";
}
