package probe

import (
	"strconv"
	"strings"
)

// The flags of lock:contention_begin, which say what kind of lock is
// contended (LCB_F_*, include/trace/events/lock.h): SPIN alone is a
// spinlock's queue, SPIN with READ or WRITE a rwlock_t's, MUTEX with
// SPIN a mutex's owner being spun on, MUTEX alone a mutex slept on,
// READ or WRITE alone an rw_semaphore slept on.
const (
	lcbSpin  = 1 << 0
	lcbRead  = 1 << 1
	lcbWrite = 1 << 2
	lcbMutex = 1 << 5
)

// contended returns the condition of a lockstat probe at
// lock:contention_end for a lock whose contention_begin had one of the
// flags given: the thread passed contention_begin while tracing, and
// took the lock (contention_end's ret is 0; a mutex_lock_killable
// killed while it waits ends with an error).
func contended(flags ...int) string {
	var fs []string
	for _, f := range flags {
		fs = append(fs, "arg9 == "+strconv.Itoa(f))
	}
	return "arg8 != 0 && (int)arg1 == 0 && (" + strings.Join(fs, " || ") + ")"
}

// waited is the time a contended lock took, from the thread's first
// contention_begin for it to contention_end, in nanoseconds.
const waited = "timestamp - arg8"

// contention is a lockstat probe's site: contention_end, paired with the
// same thread's contention_begin for the same lock, when the flags it
// passed contention_begin with every time (a mutex's waiter passes it
// flagged MUTEX|SPIN when it spins, MUTEX when it sleeps, and again for
// each wakeup it spins after) were one of those given; args are the
// probe's, over contention_end's (arg0 the lock, arg1 the result) and
// the span's (arg8, arg9).
func contention(args []string, flags ...int) []SDTSite {
	return []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended(flags...), Args: args}}
}

// lockFuncs are the sites of a lockstat probe that fires on entering
// the kernel functions named, each with the arguments given over the
// function's parameters (arg0 the lock).
func lockFuncs(args []string, funcs ...string) []SDTSite {
	var sites []SDTSite
	for _, f := range funcs {
		sites = append(sites, SDTSite{Function: f, Args: args})
	}
	return sites
}

// The types of lockstat's arguments, as Oracle's DTrace for Linux gives
// them but for a spin lock's, the raw_spinlock_t the kernel's functions
// take (Oracle's spinlock_t holds one, first); rw-block's lock is a
// struct rw_semaphore, the only read-write lock of Linux that sleeps.
var (
	argMutex = sdtArg{"struct mutex *", ""}
	argSpin  = sdtArg{"raw_spinlock_t *", ""}
	argRW    = sdtArg{"rwlock_t *", ""}
	argRWSem = sdtArg{"struct rw_semaphore *", ""}
	argTime  = sdtArg{"uint64_t", ""}
)

// lockstatSpecs are the lockstat provider's probes: illumos's for
// adaptive locks (Linux's mutexes), spin locks and read-write locks
// (rwlock_t, and rw_semaphore where a reader or writer sleeps), with
// the arguments of illumos's and Oracle's: the lock, then for a spin or
// a block the nanoseconds it took, and for a read-write lock whether
// the thread reads (1, illumos's RW_READER) or writes (0, RW_WRITER).
//
// The spin and block probes are made of the kernel's lock contention
// tracepoints, which every kernel since 5.19 has: they fire when a
// contended lock is taken, in the thread that took it. The acquire and
// release probes fire on entering the kernel's functions that take and
// release a lock, where Linux has no tracepoint: a kernel without
// kprobes or BPF trampolines cannot make them, and they fire before
// the lock is taken, with the lock's address. Those of illumos missing
// are rw-upgrade and rw-downgrade (rwlock_t cannot be upgraded or
// downgraded) and thread-spin (Linux has no thread locks).
var lockstatSpecs = []sdtSpec{{
	name:  "adaptive-acquire",
	args:  []sdtArg{argMutex},
	sites: lockFuncs([]string{"(struct mutex *)arg0"}, "mutex_lock", "mutex_lock_interruptible", "mutex_lock_killable"),
}, {
	name:  "adaptive-release",
	args:  []sdtArg{argMutex},
	sites: lockFuncs([]string{"(struct mutex *)arg0"}, "mutex_unlock"),
}, {
	// The thread slept on the mutex; the time is its whole wait,
	// spinning before and after included.
	name:  "adaptive-block",
	args:  []sdtArg{argMutex, argTime},
	sites: contention([]string{"(struct mutex *)arg0", waited}, lcbMutex),
}, {
	// The thread spun on the mutex's owner until the owner released it.
	name:  "adaptive-spin",
	args:  []sdtArg{argMutex, argTime},
	sites: contention([]string{"(struct mutex *)arg0", waited}, lcbMutex|lcbSpin),
}, {
	name:  "spin-acquire",
	args:  []sdtArg{argSpin},
	sites: lockFuncs([]string{"(raw_spinlock_t *)arg0"}, "_raw_spin_lock", "_raw_spin_lock_bh", "_raw_spin_lock_irq", "_raw_spin_lock_irqsave"),
}, {
	name:  "spin-release",
	args:  []sdtArg{argSpin},
	sites: lockFuncs([]string{"(raw_spinlock_t *)arg0"}, "_raw_spin_unlock", "_raw_spin_unlock_bh", "_raw_spin_unlock_irq", "_raw_spin_unlock_irqrestore"),
}, {
	name:  "spin-spin",
	args:  []sdtArg{argSpin, argTime},
	sites: contention([]string{"(raw_spinlock_t *)arg0", waited}, lcbSpin),
}, {
	name: "rw-acquire",
	args: []sdtArg{argRW, argInt},
	sites: append(lockFuncs([]string{"(rwlock_t *)arg0", "1"}, "_raw_read_lock", "_raw_read_lock_bh", "_raw_read_lock_irq", "_raw_read_lock_irqsave"),
		lockFuncs([]string{"(rwlock_t *)arg0", "0"}, "_raw_write_lock", "_raw_write_lock_bh", "_raw_write_lock_irq", "_raw_write_lock_irqsave")...),
}, {
	name: "rw-release",
	args: []sdtArg{argRW, argInt},
	sites: append(lockFuncs([]string{"(rwlock_t *)arg0", "1"}, "_raw_read_unlock", "_raw_read_unlock_bh", "_raw_read_unlock_irq", "_raw_read_unlock_irqrestore"),
		lockFuncs([]string{"(rwlock_t *)arg0", "0"}, "_raw_write_unlock", "_raw_write_unlock_bh", "_raw_write_unlock_irq", "_raw_write_unlock_irqrestore")...),
}, {
	// A reader or writer slept on an rw_semaphore.
	name:  "rw-block",
	args:  []sdtArg{argRWSem, argTime, argInt},
	sites: contention([]string{"(struct rw_semaphore *)arg0", waited, "arg9 == " + strconv.Itoa(lcbRead)}, lcbRead, lcbWrite),
}, {
	name:  "rw-spin",
	args:  []sdtArg{argRW, argTime, argInt},
	sites: contention([]string{"(rwlock_t *)arg0", waited, "arg9 == " + strconv.Itoa(lcbSpin|lcbRead)}, lcbSpin|lcbRead, lcbSpin|lcbWrite),
}}
