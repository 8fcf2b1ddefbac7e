struct point {
	int x;
	int y;
};

struct flags {
	unsigned int a : 1;
	unsigned int b : 3;
	unsigned int : 0;
	int c : 4, d : 2;
};

union value {
	int i;
	char c[4];
	struct point p;
};

struct node {
	struct node *next;
	union value v;
} head;

struct fwd;
struct point origin;

BEGIN
{
	x = origin.x + head.next->v.i;
	y = sizeof(struct point);
	z = sizeof(union value);
	w = offsetof(struct point, y);
}
