inline int MAX = 10;
inline int TWICE = MAX * 2;
inline unsigned int UMAX = 0xffffffff;
inline string GREETING = "hello";
inline int SUM = pid + 1;

BEGIN
{
	x = MAX;
	y = TWICE + 1;
	z = UMAX;
	p = NULL;
	s = GREETING;
	t = SUM;
	if (x > MAX)
		exit(0);
}
