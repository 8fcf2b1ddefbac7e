#include "types.h"
#include "fwd.h"

struct dup {
	long y;
	char z;
};

struct fwd_only fwd_def;
struct list b_list;
struct dup b_dup;

int b_fn(struct fwd_only *p, struct anon *q) { return p->a + q->kind; }
