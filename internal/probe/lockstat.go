package probe

// The flags of lock:contention_begin, which say what kind of lock is
// contended (LCB_F_*, include/trace/events/lock.h): SPIN alone is a
// spinlock's queue, SPIN with READ or WRITE a rwlock_t's, MUTEX with
// SPIN a mutex's owner being spun on, MUTEX alone a mutex slept on,
// READ or WRITE alone an rw_semaphore slept on. They are D constants,
// so that the specs are constant data, made at no cost at start-up.
const (
	lcbSpin      = "1"  // LCB_F_SPIN
	lcbRead      = "2"  // LCB_F_READ
	lcbWrite     = "4"  // LCB_F_WRITE
	lcbMutex     = "32" // LCB_F_MUTEX
	lcbSpinRead  = "3"  // LCB_F_SPIN | LCB_F_READ
	lcbSpinWrite = "5"  // LCB_F_SPIN | LCB_F_WRITE
	lcbMutexSpin = "33" // LCB_F_MUTEX | LCB_F_SPIN
)

// contended begins the condition of a lockstat probe at
// lock:contention_end: the thread passed contention_begin while
// tracing, and took the lock (contention_end's ret is 0; a
// mutex_lock_killable killed while it waits ends with an error). The
// condition goes on to test the flags contention_begin had (arg9).
const contended = "arg8 != 0 && (int)arg1 == 0 && "

// waited is the time a contended lock took, from the thread's first
// contention_begin for it to contention_end, in nanoseconds.
const waited = "timestamp - arg8"

// A lockstat probe's spin or block site is contention_end, paired with
// the same thread's contention_begin for the same lock (Since), when
// the flags it passed contention_begin with every time (a mutex's
// waiter passes it flagged MUTEX|SPIN when it spins, MUTEX when it
// sleeps, and again for each wakeup it spins after) were one of those
// the probe's; its args are over contention_end's (arg0 the lock, arg1
// the result) and the span's (arg8, arg9). An acquire or release
// probe's sites are the entries of the kernel's functions that take or
// release the lock, each with the same arguments over the function's
// parameters (arg0 the lock).

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
	name: "adaptive-acquire",
	args: []sdtArg{argMutex},
	sites: []SDTSite{
		{Function: "mutex_lock", Args: mutexLock},
		{Function: "mutex_lock_interruptible", Args: mutexLock},
		{Function: "mutex_lock_killable", Args: mutexLock},
	},
}, {
	name:  "adaptive-release",
	args:  []sdtArg{argMutex},
	sites: []SDTSite{{Function: "mutex_unlock", Args: mutexLock}},
}, {
	// The thread slept on the mutex; the time is its whole wait,
	// spinning before and after included.
	name: "adaptive-block",
	args: []sdtArg{argMutex, argTime},
	sites: []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended + "(arg9 == " + lcbMutex + ")", Args: []string{"(struct mutex *)arg0", waited}}},
}, {
	// The thread spun on the mutex's owner until the owner released it.
	name: "adaptive-spin",
	args: []sdtArg{argMutex, argTime},
	sites: []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended + "(arg9 == " + lcbMutexSpin + ")", Args: []string{"(struct mutex *)arg0", waited}}},
}, {
	name: "spin-acquire",
	args: []sdtArg{argSpin},
	sites: []SDTSite{
		{Function: "_raw_spin_lock", Args: spinLock},
		{Function: "_raw_spin_lock_bh", Args: spinLock},
		{Function: "_raw_spin_lock_irq", Args: spinLock},
		{Function: "_raw_spin_lock_irqsave", Args: spinLock},
	},
}, {
	name: "spin-release",
	args: []sdtArg{argSpin},
	sites: []SDTSite{
		{Function: "_raw_spin_unlock", Args: spinLock},
		{Function: "_raw_spin_unlock_bh", Args: spinLock},
		{Function: "_raw_spin_unlock_irq", Args: spinLock},
		{Function: "_raw_spin_unlock_irqrestore", Args: spinLock},
	},
}, {
	name: "spin-spin",
	args: []sdtArg{argSpin, argTime},
	sites: []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended + "(arg9 == " + lcbSpin + ")", Args: []string{"(raw_spinlock_t *)arg0", waited}}},
}, {
	name: "rw-acquire",
	args: []sdtArg{argRW, argInt},
	sites: []SDTSite{
		{Function: "_raw_read_lock", Args: rwReader},
		{Function: "_raw_read_lock_bh", Args: rwReader},
		{Function: "_raw_read_lock_irq", Args: rwReader},
		{Function: "_raw_read_lock_irqsave", Args: rwReader},
		{Function: "_raw_write_lock", Args: rwWriter},
		{Function: "_raw_write_lock_bh", Args: rwWriter},
		{Function: "_raw_write_lock_irq", Args: rwWriter},
		{Function: "_raw_write_lock_irqsave", Args: rwWriter},
	},
}, {
	name: "rw-release",
	args: []sdtArg{argRW, argInt},
	sites: []SDTSite{
		{Function: "_raw_read_unlock", Args: rwReader},
		{Function: "_raw_read_unlock_bh", Args: rwReader},
		{Function: "_raw_read_unlock_irq", Args: rwReader},
		{Function: "_raw_read_unlock_irqrestore", Args: rwReader},
		{Function: "_raw_write_unlock", Args: rwWriter},
		{Function: "_raw_write_unlock_bh", Args: rwWriter},
		{Function: "_raw_write_unlock_irq", Args: rwWriter},
		{Function: "_raw_write_unlock_irqrestore", Args: rwWriter},
	},
}, {
	// A reader or writer slept on an rw_semaphore.
	name: "rw-block",
	args: []sdtArg{argRWSem, argTime, argInt},
	sites: []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended + "(arg9 == " + lcbRead + " || arg9 == " + lcbWrite + ")",
		Args: []string{"(struct rw_semaphore *)arg0", waited, "arg9 == " + lcbRead}}},
}, {
	name: "rw-spin",
	args: []sdtArg{argRW, argTime, argInt},
	sites: []SDTSite{{System: "lock", Event: "contention_end", Since: "contention_begin",
		Cond: contended + "(arg9 == " + lcbSpinRead + " || arg9 == " + lcbSpinWrite + ")",
		Args: []string{"(rwlock_t *)arg0", waited, "arg9 == " + lcbSpinRead}}},
}}

// The arguments of the acquire and release probes' sites: the lock,
// and for a read-write lock whether the thread reads (1) or writes (0).
var (
	mutexLock = []string{"(struct mutex *)arg0"}
	spinLock  = []string{"(raw_spinlock_t *)arg0"}
	rwReader  = []string{"(rwlock_t *)arg0", "1"}
	rwWriter  = []string{"(rwlock_t *)arg0", "0"}
)
