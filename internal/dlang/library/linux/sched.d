/*
 * A CPU (cpuinfo_t): the one a sched provider probe names, translated
 * from the run queue the kernel passes (Linux has one struct rq per
 * CPU), or the one a task runs or last ran on, translated from the
 * task. Linux has no processor sets, so cpu_pset is always -1
 * (PS_NONE); the chip and locality group have no field to come from
 * and are left out.
 */

#pragma D depends_on module vmlinux

typedef int processorid_t;
typedef int psetid_t;
typedef int chipid_t;
typedef int lgrp_id_t;

typedef struct cpuinfo {
	processorid_t cpu_id;	/* CPU number */
	psetid_t cpu_pset;	/* processor set: always -1 on Linux */
	chipid_t cpu_chip;	/* not translated on Linux */
	lgrp_id_t cpu_lgrp;	/* not translated on Linux */
} cpuinfo_t;

translator cpuinfo_t < struct rq *R > {
	cpu_id = R->cpu;
	cpu_pset = -1;
};

translator cpuinfo_t < struct task_struct *T > {
	cpu_id = T->thread_info.cpu;
	cpu_pset = -1;
};

/*
 * The CPU the current thread runs on. illumos translates it from the
 * thread's t_cpu; Linux's run queues are per-CPU data, which D cannot
 * reach, so it is translated from the current thread, which runs on it.
 */
inline cpuinfo_t *curcpu = xlate <cpuinfo_t *> (curthread);
#pragma D attributes Stable/Stable/Common curcpu
#pragma D binding "1.0" curcpu
