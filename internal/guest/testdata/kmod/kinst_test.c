// SPDX-License-Identifier: GPL-2.0
/*
 * kinst_test: the function shapes kdtrace's kinst inline tests need,
 * run a known number of times. Writing N to /proc/kinst_test calls each
 * caller N times, so every probe below fires a count known in advance:
 *
 *   kinst_test_inline      always inlined, into three callers;
 *   kinst_test_both        inlined into kinst_test_caller3 and also
 *                          kept out of line, called through a pointer;
 *   kinst_test_fbtconvert  never inlined: kinst::...:entry becomes fbt;
 *   kinst_test_notrace     never inlined and notrace: no kprobe allowed.
 *
 * Writing N to /proc/kinst_loops runs the loop shapes below N times,
 * with trip counts that vary from run to run (zero included); each
 * function inlined into them counts its own calls, and reading the file
 * gives those counts for the last write, one "name count" line each.
 *
 * The arguments come from a variable the compiler cannot see through,
 * so that it makes no constant-propagated clones of the functions.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

static unsigned long kinst_test_seed = 0x1234;
module_param(kinst_test_seed, ulong, 0644);

static unsigned long kinst_test_sink;

static __always_inline unsigned long kinst_test_inline(unsigned long a, unsigned long b)
{
	/* Two paths out, so each copy has more than one way to return. */
	if (a & 1)
		return a * 3 + b;
	return (a ^ b) + 7;
}

/*
 * Not declared inline: the kernel's inline implies notrace, and kprobe
 * events refuse every instruction of a function ftrace cannot trace
 * (CONFIG_KPROBE_EVENTS_ON_NOTRACE is off in distribution kernels), so
 * the out-of-line copy could not be probed. gcc inlines it into
 * kinst_test_caller3 on its own, and keeps it for the pointer.
 */
static unsigned long kinst_test_both(unsigned long a)
{
	return a * a + 1;
}

static noinline unsigned long kinst_test_fbtconvert(unsigned long a)
{
	WRITE_ONCE(kinst_test_sink, a);
	return a + 1;
}

/*
 * Never inlined and notrace: kprobe events refuse it, which kdtrace
 * must say plainly.
 */
static noinline notrace unsigned long kinst_test_notrace(unsigned long a)
{
	WRITE_ONCE(kinst_test_sink, a);
	return a ^ 1;
}

static unsigned long (*kinst_test_both_ptr)(unsigned long) = kinst_test_both;

static noinline unsigned long kinst_test_caller1(unsigned long a)
{
	return kinst_test_inline(a, 1);
}

static noinline unsigned long kinst_test_caller2(unsigned long a)
{
	return kinst_test_inline(a + 1, 2) + kinst_test_fbtconvert(a);
}

static noinline unsigned long kinst_test_caller3(unsigned long a)
{
	return kinst_test_inline(a, 3) + __builtin_expect(a > 1, 1) * kinst_test_both(a);
}

static ssize_t kinst_test_write(struct file *file, const char __user *buf,
				size_t len, loff_t *pos)
{
	unsigned int i, n;
	unsigned long seed, sum = 0;
	int err;

	err = kstrtouint_from_user(buf, len, 10, &n);
	if (err)
		return err;
	seed = READ_ONCE(kinst_test_seed);
	for (i = 0; i < n; i++) {
		sum += kinst_test_caller1(seed + i);
		sum += kinst_test_caller2(seed + i);
		sum += kinst_test_caller3(seed + i);
		sum += READ_ONCE(kinst_test_both_ptr)(seed + i);
		sum += kinst_test_notrace(seed + i);
	}
	WRITE_ONCE(kinst_test_sink, sum);
	return len;
}

static const struct proc_ops kinst_test_ops = {
	.proc_write = kinst_test_write,
};


/*
 * The loop shapes. Every function below is inlined, always_inline ones
 * (__always_inline) and plain static inline ones (gcc's choice; the
 * kernel's inline implies notrace, so an out-of-line copy would refuse
 * probes), and bumps its own counter on every call with a volatile
 * load and store, which the compiler can neither drop nor merge: the
 * counters are the truth kinst::f:entry and :return are held to, and
 * each copy of a function's code holds one store to its counter.
 */
#define KINST_LOOP_FUNCS(X)						\
	X(kinst_loop_peel_f) X(kinst_loop_peel_g)			\
	X(kinst_loop_unroll_f) X(kinst_loop_unroll_g)			\
	X(kinst_loop_while_more) X(kinst_loop_while_skip)		\
	X(kinst_loop_while_stop)					\
	X(kinst_loop_nested_inner) X(kinst_loop_nested_outer)		\
	X(kinst_loop_switch_f) X(kinst_loop_switch_g)			\
	X(kinst_loop_find) X(kinst_loop_find_odd)

#define KINST_LOOP_COUNTER(f) static unsigned long f##_calls;
KINST_LOOP_FUNCS(KINST_LOOP_COUNTER)

#define KINST_LOOP_COUNT(f) WRITE_ONCE(f##_calls, READ_ONCE(f##_calls) + 1)

/*
 * A counted loop whose first iteration gcc peels: i == 0 is known on
 * the way in and i != 0 on the back edge, so jump threading gives the
 * first iteration a copy of kinst_loop_peel_f of its own.
 */
static __always_inline unsigned long kinst_loop_peel_f(unsigned long i, unsigned long x)
{
	KINST_LOOP_COUNT(kinst_loop_peel_f);
	if (i == 0) {
		WRITE_ONCE(kinst_test_sink, x);
		return x;
	}
	return i * x;
}

static inline unsigned long kinst_loop_peel_g(unsigned long i)
{
	KINST_LOOP_COUNT(kinst_loop_peel_g);
	return i ^ 5;
}

static noinline unsigned long kinst_loop_peel(unsigned long x)
{
	unsigned long i, r = 0;

	for (i = 0; i < x; i++)
		r += kinst_loop_peel_f(i, x) + kinst_loop_peel_g(i);
	return r;
}

/*
 * A loop unrolled four times, with the remainder's iterations in front
 * of it: seven copies of each function's code.
 */
static __always_inline unsigned long kinst_loop_unroll_f(unsigned long a)
{
	KINST_LOOP_COUNT(kinst_loop_unroll_f);
	return a * 7 + 1;
}

static inline unsigned long kinst_loop_unroll_g(unsigned long a)
{
	KINST_LOOP_COUNT(kinst_loop_unroll_g);
	return a >> 1;
}

static noinline unsigned long kinst_loop_unroll(unsigned long n, unsigned long s)
{
	unsigned long i, r = 0;

#pragma GCC unroll 4
	for (i = 0; i < n; i++)
		r += kinst_loop_unroll_f(s + i) ^ kinst_loop_unroll_g(r);
	return r;
}

/*
 * A while loop whose condition is an inline call, left early by
 * continue and by break. gcc copies the loop's header, the condition,
 * in front of the loop: two copies of kinst_loop_while_more's code.
 */
static inline bool kinst_loop_while_more(unsigned long v, unsigned long end)
{
	KINST_LOOP_COUNT(kinst_loop_while_more);
	return v < end;
}

static __always_inline bool kinst_loop_while_skip(unsigned long v)
{
	KINST_LOOP_COUNT(kinst_loop_while_skip);
	return v % 3 == 0;
}

static inline bool kinst_loop_while_stop(unsigned long v, unsigned long s)
{
	KINST_LOOP_COUNT(kinst_loop_while_stop);
	return v - s == 7;
}

static noinline unsigned long kinst_loop_while(unsigned long n, unsigned long s)
{
	unsigned long v = s, r = 0;

	while (kinst_loop_while_more(v, s + n)) {
		v++;
		if (kinst_loop_while_skip(v))
			continue;
		if (kinst_loop_while_stop(v, s))
			break;
		r += v;
	}
	return r;
}

/*
 * A loop nested in another, the inner one's trip count the outer's i,
 * its first iteration special: gcc peels it, as the counted loop's.
 */
static __always_inline unsigned long kinst_loop_nested_inner(unsigned long i, unsigned long j)
{
	KINST_LOOP_COUNT(kinst_loop_nested_inner);
	if (j == 0) {
		WRITE_ONCE(kinst_test_sink, i);
		return i;
	}
	return i * j + 1;
}

static inline unsigned long kinst_loop_nested_outer(unsigned long i)
{
	KINST_LOOP_COUNT(kinst_loop_nested_outer);
	return i << 2;
}

static noinline unsigned long kinst_loop_nested(unsigned long n, unsigned long s)
{
	unsigned long i, j, r = 0;

	for (i = 0; i < n; i++) {
		r += kinst_loop_nested_outer(s + i);
		for (j = 0; j < i; j++)
			r ^= kinst_loop_nested_inner(s + i, j);
	}
	return r;
}

/* A switch, each function inlined into more than one of its cases. */
static __always_inline unsigned long kinst_loop_switch_f(unsigned long a)
{
	KINST_LOOP_COUNT(kinst_loop_switch_f);
	return a * 5;
}

static inline unsigned long kinst_loop_switch_g(unsigned long a)
{
	KINST_LOOP_COUNT(kinst_loop_switch_g);
	return a + 11;
}

static noinline unsigned long kinst_loop_switch(unsigned long n, unsigned long s)
{
	unsigned long i, r = 0;

	for (i = 0; i < n; i++) {
		switch ((s + i) % 5) {
		case 0:
			r += kinst_loop_switch_f(i);
			break;
		case 1:
			r += kinst_loop_switch_g(i);
			fallthrough;
		case 2:
			r ^= kinst_loop_switch_f(r);
			break;
		case 3:
			r -= kinst_loop_switch_g(r);
			break;
		default:
			r++;
		}
	}
	return r;
}

/*
 * Inline functions with a loop of their own, left by an early return:
 * kinst_loop_find's loop unrolled whole, one early return a copy.
 */
static unsigned long kinst_loop_table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };

static __always_inline long kinst_loop_find(unsigned long n, unsigned long key)
{
	unsigned long i;

	KINST_LOOP_COUNT(kinst_loop_find);
#pragma GCC unroll 8
	for (i = 0; i < n; i++)
		if (READ_ONCE(kinst_loop_table[i]) == key)
			return i;
	return -1;
}

static inline long kinst_loop_find_odd(unsigned long n)
{
	unsigned long i;

	KINST_LOOP_COUNT(kinst_loop_find_odd);
	for (i = 0; i < n; i++)
		if (READ_ONCE(kinst_loop_table[i]) & 1)
			return i;
	return -1;
}

static noinline unsigned long kinst_loop_search(unsigned long n, unsigned long s)
{
	unsigned long k, r = 0;

	for (k = 0; k < n; k++)
		r += kinst_loop_find(ARRAY_SIZE(kinst_loop_table), (s + k) % 10) +
		     kinst_loop_find_odd((s + k) % 4);
	return r;
}

static ssize_t kinst_loops_write(struct file *file, const char __user *buf,
				 size_t len, loff_t *pos)
{
	unsigned int i, n;
	unsigned long seed, sum = 0;
	int err;

	err = kstrtouint_from_user(buf, len, 10, &n);
	if (err)
		return err;
#define KINST_LOOP_RESET(f) WRITE_ONCE(f##_calls, 0);
	KINST_LOOP_FUNCS(KINST_LOOP_RESET)
	seed = READ_ONCE(kinst_test_seed);
	for (i = 0; i < n; i++) {
		/* Trip counts 0 to 10 and 0 to 6. */
		unsigned long trip = (seed + i) % 11, small = (seed + i) % 7;

		sum += kinst_loop_peel(trip);
		sum += kinst_loop_unroll(trip, seed + i);
		sum += kinst_loop_while(trip + 3, seed + i);
		sum += kinst_loop_nested(small, seed + i);
		sum += kinst_loop_switch(trip, seed + i);
		sum += kinst_loop_search(small, seed + i);
	}
	WRITE_ONCE(kinst_test_sink, sum);
	return len;
}

static int kinst_loops_show(struct seq_file *m, void *v)
{
#define KINST_LOOP_SHOW(f) seq_printf(m, "%s %lu\n", #f, READ_ONCE(f##_calls));
	KINST_LOOP_FUNCS(KINST_LOOP_SHOW)
	return 0;
}

static int kinst_loops_open(struct inode *inode, struct file *file)
{
	return single_open(file, kinst_loops_show, NULL);
}

static const struct proc_ops kinst_loops_ops = {
	.proc_open = kinst_loops_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = kinst_loops_write,
};

static struct proc_dir_entry *kinst_test_entry, *kinst_loops_entry;

static int __init kinst_test_init(void)
{
	kinst_test_entry = proc_create("kinst_test", 0200, NULL, &kinst_test_ops);
	if (!kinst_test_entry)
		return -ENOMEM;
	kinst_loops_entry = proc_create("kinst_loops", 0600, NULL, &kinst_loops_ops);
	if (!kinst_loops_entry) {
		proc_remove(kinst_test_entry);
		return -ENOMEM;
	}
	return 0;
}

static void __exit kinst_test_exit(void)
{
	proc_remove(kinst_loops_entry);
	proc_remove(kinst_test_entry);
}

module_init(kinst_test_init);
module_exit(kinst_test_exit);
MODULE_DESCRIPTION("kdtrace's kinst inline test functions");
MODULE_LICENSE("GPL");
