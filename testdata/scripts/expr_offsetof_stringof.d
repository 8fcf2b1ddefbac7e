struct rec {
	char tag;
	int value;
	long stamp;
	char name[16];
};

BEGIN
{
	a = offsetof(struct rec, tag);
	b = offsetof(struct rec, value);
	c = offsetof(struct rec, stamp);
	d = offsetof(struct rec, name);
	e = stringof(arg0);
	f = stringof x;
	g = stringof(curthread->td_name);
	h = stringof 1;
}
