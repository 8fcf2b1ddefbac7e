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
 * The arguments come from a variable the compiler cannot see through,
 * so that it makes no constant-propagated clones of the functions.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
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

static struct proc_dir_entry *kinst_test_entry;

static int __init kinst_test_init(void)
{
	kinst_test_entry = proc_create("kinst_test", 0200, NULL, &kinst_test_ops);
	return kinst_test_entry ? 0 : -ENOMEM;
}

static void __exit kinst_test_exit(void)
{
	proc_remove(kinst_test_entry);
}

module_init(kinst_test_init);
module_exit(kinst_test_exit);
MODULE_DESCRIPTION("kdtrace's kinst inline test functions");
MODULE_LICENSE("GPL");
