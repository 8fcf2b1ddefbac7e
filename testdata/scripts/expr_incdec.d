BEGIN
{
	x++;
	x--;
	++x;
	--x;
	y = x++ + ++x;
	z = x-- - --x;
	self->n++;
	++a[1];
	@c[1]++;
}
