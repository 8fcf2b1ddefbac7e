/*
 * The CPU a sched provider probe names (cpuinfo_t), translated from the
 * run queue the kernel passes: Linux has one struct rq per CPU. Linux
 * has no processor sets, so cpu_pset is always -1 (PS_NONE); the chip
 * and locality group have no field to come from and are left out.
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
