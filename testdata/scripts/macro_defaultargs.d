/* args: -x defaultargs */
BEGIN
{
	a = $1;
	b = $$2;
	c = $3 + 1;
}
