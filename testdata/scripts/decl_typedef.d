typedef int foo_t;
typedef struct pair {
	int a;
	int b;
} pair_t;
typedef foo_t bar_t;

foo_t *p;
bar_t counts[int];
pair_t pr;

BEGIN
{
	x = (foo_t)y;
	z = (foo_t *)arg0;
	s = sizeof(foo_t);
	t = sizeof(pair_t);
	u = (bar_t)3;
	v = offsetof(pair_t, b);
	w = pr.a;
}
