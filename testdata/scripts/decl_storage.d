self int depth;
this int local;
extern int ticks;
int total;
self string name;
typedef int myint_t;

BEGIN
{
	self->depth = 1;
	this->local = 2;
	total = ticks;
	self->name = "x";
}
