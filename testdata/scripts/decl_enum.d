enum color { RED, GREEN = 5, BLUE };
enum { ANON_A = 1 << 3, ANON_B };
enum color favourite;

BEGIN
{
	a = RED;
	b = BLUE;
	c = ANON_B;
	d = GREEN + ANON_A;
	favourite = BLUE;
}
