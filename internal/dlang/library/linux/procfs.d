/*
 * procfs.d: dtrace's process model on Linux.
 *
 * psinfo_t describes a process and lwpsinfo_t one of its threads, with
 * the members of illumos' and FreeBSD's proc(4) structures that Linux can
 * fill. Both translate from the kernel's struct task_struct:
 * curpsinfo and curlwpsinfo describe the thread that fired the probe,
 * and xlate <psinfo_t *> (t) any other task t.
 *
 * Members that Linux has no counterpart for are left out rather than
 * filled with a made-up value, so that a script that uses one fails to
 * compile.
 */

#pragma D depends_on module vmlinux

/*
 * pr_state values, with the letter pr_sname holds for each.
 */
inline char SSLEEP = 1;		/* S: waiting for an event */
#pragma D binding "1.0" SSLEEP
inline char SRUN = 2;		/* R: runnable, waiting for a CPU */
#pragma D binding "1.0" SRUN
inline char SZOMB = 3;		/* Z: exited, not yet reaped */
#pragma D binding "1.0" SZOMB
inline char SSTOP = 4;		/* T: stopped by a signal or a tracer */
#pragma D binding "1.0" SSTOP
inline char SIDL = 5;		/* I: being created */
#pragma D binding "1.0" SIDL
inline char SONPROC = 6;	/* O: running on a CPU */
#pragma D binding "1.0" SONPROC
inline char SWAIT = 7;		/* W: never set on Linux */
#pragma D binding "1.0" SWAIT

/*
 * The bits of task_struct's __state and exit_state, from the kernel's
 * linux/sched.h. They are not part of the kernel's BTF.
 */
inline unsigned int TASK_RUNNING = 0x0;
#pragma D binding "1.0" TASK_RUNNING
inline unsigned int TASK_INTERRUPTIBLE = 0x1;
#pragma D binding "1.0" TASK_INTERRUPTIBLE
inline unsigned int TASK_UNINTERRUPTIBLE = 0x2;
#pragma D binding "1.0" TASK_UNINTERRUPTIBLE
inline unsigned int __TASK_STOPPED = 0x4;
#pragma D binding "1.0" __TASK_STOPPED
inline unsigned int __TASK_TRACED = 0x8;
#pragma D binding "1.0" __TASK_TRACED
inline int EXIT_DEAD = 0x10;
#pragma D binding "1.0" EXIT_DEAD
inline int EXIT_ZOMBIE = 0x20;
#pragma D binding "1.0" EXIT_ZOMBIE
inline unsigned int TASK_PARKED = 0x40;
#pragma D binding "1.0" TASK_PARKED
inline unsigned int TASK_DEAD = 0x80;
#pragma D binding "1.0" TASK_DEAD
inline unsigned int TASK_WAKEKILL = 0x100;
#pragma D binding "1.0" TASK_WAKEKILL
inline unsigned int TASK_WAKING = 0x200;
#pragma D binding "1.0" TASK_WAKING
inline unsigned int TASK_NOLOAD = 0x400;
#pragma D binding "1.0" TASK_NOLOAD
inline unsigned int TASK_NEW = 0x800;
#pragma D binding "1.0" TASK_NEW

/*
 * The bits of task_struct's flags that the translators read, from
 * linux/sched.h.
 */
inline unsigned int PF_IDLE = 0x00000002;
#pragma D binding "1.0" PF_IDLE
inline unsigned int PF_KTHREAD = 0x00200000;
#pragma D binding "1.0" PF_KTHREAD

/*
 * A thread's pr_flag bits, valued as illumos's sys/procfs.h values
 * them: those whose meaning Linux has. The others describe /proc's
 * control of a process (PR_DSTOP, PR_STEP, PR_FORK, PR_RLC, PR_KLC,
 * PR_ASYNC, PR_BPTADJ, PR_MSACCT, PR_MSFORK, PR_PCINVAL, PR_AGENT),
 * Solaris's threads library (PR_ASLWP, PR_DETACH, PR_DAEMON) or state
 * Linux does not keep (PR_VFORKP, PR_ORPHAN, PR_NOSIGCHLD, PR_WAITPID);
 * they are not defined, and kdtrace says so when a script names one.
 */
inline int PR_STOPPED = 0x00000001;	/* stopped: by a signal or a tracer */
#pragma D binding "1.0" PR_STOPPED
inline int PR_ISTOP = 0x00000002;	/* stopped for its tracer (ptrace) */
#pragma D binding "1.0" PR_ISTOP
inline int PR_ASLEEP = 0x00000010;	/* in an interruptible sleep */
#pragma D binding "1.0" PR_ASLEEP
inline int PR_IDLE = 0x00000400;	/* a CPU's idle thread */
#pragma D binding "1.0" PR_IDLE
inline int PR_ISSYS = 0x00001000;	/* a kernel thread */
#pragma D binding "1.0" PR_ISSYS
inline int PR_PTRACE = 0x04000000;	/* traced with ptrace(2) */
#pragma D binding "1.0" PR_PTRACE

/*
 * Scheduling policies (task_struct's policy), from linux/sched.h of the
 * UAPI headers.
 */
inline unsigned int SCHED_NORMAL = 0;
#pragma D binding "1.0" SCHED_NORMAL
inline unsigned int SCHED_FIFO = 1;
#pragma D binding "1.0" SCHED_FIFO
inline unsigned int SCHED_RR = 2;
#pragma D binding "1.0" SCHED_RR
inline unsigned int SCHED_BATCH = 3;
#pragma D binding "1.0" SCHED_BATCH
inline unsigned int SCHED_IDLE = 5;
#pragma D binding "1.0" SCHED_IDLE
inline unsigned int SCHED_DEADLINE = 6;
#pragma D binding "1.0" SCHED_DEADLINE
inline unsigned int SCHED_EXT = 7;
#pragma D binding "1.0" SCHED_EXT

/*
 * A thread. Its CPU is the one it runs on or last ran on; it is bound to
 * that CPU when its affinity allows no other. Linux has no processor
 * sets, and a thread's priority is the kernel's: lower runs first.
 */
typedef struct lwpsinfo {
	int pr_flag;		/* PR_STOPPED, PR_IDLE, … */
	id_t pr_lwpid;		/* thread ID */
	uintptr_t pr_addr;	/* its struct task_struct */
	char pr_state;		/* SSLEEP, SRUN, … */
	char pr_sname;		/* S, R, Z, T, I or O */
	char pr_nice;		/* nice value, -20 to 19 */
	int pr_pri;		/* kernel priority, -1 to 139 */
	char pr_clname[8];	/* scheduling class: TS, FF, RR, B, IDL, DLN, EXT */
	char pr_name[16];	/* thread name */
	int pr_onpro;		/* CPU it runs or last ran on */
	int pr_bindpro;		/* CPU it is bound to, or -1 */
	int pr_bindpset;	/* processor set: always -1 */
} lwpsinfo_t;

/*
 * A process: the thread group of a task. Its arguments and environment
 * live in user memory, at pr_argv and pr_envp; pr_psargs holds the
 * arguments separated by spaces, at most PRARGSZ-1 bytes of them.
 */
typedef struct psinfo {
	int pr_flag;		/* the PF_* flags of the group leader */
	int pr_nlwp;		/* number of threads */
	pid_t pr_pid;		/* process ID */
	pid_t pr_ppid;		/* parent's process ID */
	pid_t pr_pgid;		/* process group ID */
	pid_t pr_sid;		/* session ID */
	uid_t pr_uid;		/* real user ID */
	uid_t pr_euid;		/* effective user ID */
	gid_t pr_gid;		/* real group ID */
	gid_t pr_egid;		/* effective group ID */
	uintptr_t pr_addr;	/* the group leader's struct task_struct */
	char pr_fname[16];	/* command name */
	char pr_psargs[80];	/* initial characters of the arguments */
	uintptr_t pr_argv;	/* user address of the arguments */
	uintptr_t pr_envp;	/* user address of the environment */
	char pr_dmodel;		/* data model: PR_MODEL_ILP32 or PR_MODEL_LP64 */
} psinfo_t;

inline char PR_MODEL_ILP32 = 1;
#pragma D binding "1.0" PR_MODEL_ILP32
inline char PR_MODEL_LP64 = 2;
#pragma D binding "1.0" PR_MODEL_LP64

/*
 * Process group and session IDs are those of the initial PID namespace,
 * as /proc shows them there; signal_struct's pids[] is indexed by enum
 * pid_type, where PIDTYPE_PGID is 2 and PIDTYPE_SID 3. A kernel thread has no user memory, so its
 * pr_argv and pr_envp are 0.
 */
translator psinfo_t < struct task_struct *T > {
	pr_flag = T->group_leader->flags;
	pr_nlwp = T->signal->nr_threads;
	pr_pid = T->tgid;
	pr_ppid = T->real_parent->tgid;
	pr_pgid = T->signal->pids[2]->numbers[0].nr;
	pr_sid = T->signal->pids[3]->numbers[0].nr;
	pr_uid = T->cred->uid.val;
	pr_euid = T->cred->euid.val;
	pr_gid = T->cred->gid.val;
	pr_egid = T->cred->egid.val;
	pr_addr = (uintptr_t)T->group_leader;
	pr_fname = T->group_leader->comm;
	/*
	 * The arguments are read from the process's memory (execargs),
	 * which a probe can read only in the process it fires in; another
	 * process's pr_psargs, and a kernel thread's, which has no
	 * arguments, is its command name, as Oracle's DTrace for Linux
	 * gives a kernel thread's.
	 */
	pr_psargs = T->mm != NULL && T->mm == curthread->mm ? execargs :
	    T->group_leader->comm;
	pr_argv = T->mm != NULL ? T->mm->arg_start : 0;
	pr_envp = T->mm != NULL ? T->mm->env_start : 0;
	/*
	 * A 32-bit process's address space ends at 4 GB (x86's
	 * IA32_PAGE_OFFSET); a kernel thread has none and runs 64-bit code.
	 */
	pr_dmodel = T->mm != NULL && T->mm->task_size <= 0x100000000 ?
	    PR_MODEL_ILP32 : PR_MODEL_LP64;
};

translator lwpsinfo_t < struct task_struct *T > {
	pr_flag = (T->__state & (__TASK_STOPPED | __TASK_TRACED) ? PR_STOPPED : 0) |
	    (T->__state & __TASK_TRACED ? PR_ISTOP : 0) |
	    (T->__state & TASK_INTERRUPTIBLE ? PR_ASLEEP : 0) |
	    (T->flags & PF_IDLE ? PR_IDLE : 0) |
	    (T->flags & PF_KTHREAD ? PR_ISSYS : 0) |
	    (T->ptrace != 0 ? PR_PTRACE : 0);
	pr_lwpid = T->pid;
	pr_addr = (uintptr_t)T;
	pr_state = T->exit_state & (EXIT_ZOMBIE | EXIT_DEAD) ? SZOMB :
	    T->__state == TASK_RUNNING ? (T->on_cpu ? SONPROC : SRUN) :
	    T->__state & TASK_NEW ? SIDL :
	    T->__state & (__TASK_STOPPED | __TASK_TRACED) ? SSTOP : SSLEEP;
	pr_sname = T->exit_state & (EXIT_ZOMBIE | EXIT_DEAD) ? 'Z' :
	    T->__state == TASK_RUNNING ? (T->on_cpu ? 'O' : 'R') :
	    T->__state & TASK_NEW ? 'I' :
	    T->__state & (__TASK_STOPPED | __TASK_TRACED) ? 'T' : 'S';
	pr_nice = T->static_prio - 120;
	pr_pri = T->prio;
	pr_clname = T->policy == SCHED_NORMAL ? "TS" :
	    T->policy == SCHED_FIFO ? "FF" :
	    T->policy == SCHED_RR ? "RR" :
	    T->policy == SCHED_BATCH ? "B" :
	    T->policy == SCHED_IDLE ? "IDL" :
	    T->policy == SCHED_DEADLINE ? "DLN" :
	    T->policy == SCHED_EXT ? "EXT" : "?";
	pr_name = T->comm;
	pr_onpro = T->thread_info.cpu;
	pr_bindpro = T->nr_cpus_allowed == 1 ? T->thread_info.cpu : -1;
	pr_bindpset = -1;
};

inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);
#pragma D attributes Stable/Stable/Common curpsinfo
#pragma D binding "1.0" curpsinfo

inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);
#pragma D attributes Stable/Stable/Common curlwpsinfo
#pragma D binding "1.0" curlwpsinfo

/*
 * The current process's working directory and root directory, as
 * paths from the root of the mount tree, as illumos's v_path gives
 * them: a chrooted process's root is the directory it is chrooted to.
 * d_path() walks the directories up to the root, crossing mounts, in
 * at most 128 steps and strsize-4 bytes, keeping the last names behind
 * "..." if the path is longer.
 */
inline string cwd = d_path(&curthread->fs->pwd);
#pragma D attributes Stable/Stable/Common cwd
#pragma D binding "1.0" cwd

inline string root = d_path(&curthread->fs->root);
#pragma D attributes Stable/Stable/Common root
#pragma D binding "1.0" root

/*
 * The signal information of proc:::signal-handle, from the kernel's
 * struct kernel_siginfo: which members of its union hold data depends
 * on the signal, as in siginfo(3head).
 */
typedef struct siginfo {
	int si_signo;		/* signal number */
	int si_code;		/* SI_USER, SI_KERNEL, CLD_EXITED … */
	int si_errno;		/* an error number, for some signals */
	pid_t si_pid;		/* sender's process ID (kill, sigqueue, SIGCHLD) */
	uid_t si_uid;		/* sender's real user ID */
	uintptr_t si_addr;	/* faulting address (SIGSEGV, SIGBUS, …) */
	int si_status;		/* exit status (SIGCHLD) */
} siginfo_t;

translator siginfo_t < struct kernel_siginfo *S > {
	si_signo = S->si_signo;
	si_code = S->si_code;
	si_errno = S->si_errno;
	si_pid = S->_sifields._kill._pid;
	si_uid = S->_sifields._kill._uid;
	si_addr = (uintptr_t)S->_sifields._sigfault._addr;
	si_status = S->_sifields._sigchld._status;
};
