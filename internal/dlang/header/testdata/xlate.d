/*
 * Translated argument lists: the header declares the native (input)
 * types and counts the native arguments; the translated ones are D's
 * view only.
 */
struct task {
	int pid;
	char *name;
};

typedef struct taskinfo {
	int ti_pid;
	string ti_name;
} taskinfo_t;

translator taskinfo_t < struct task *t > {
	ti_pid = t->pid;
	ti_name = stringof(t->name);
};

provider sched {
	probe widen(int v) : (long v);
	probe info(struct task *t) : (taskinfo_t *t);
	probe pick(struct task *t, int cpu, int prio) : (int prio, struct task *t);
	probe none() : ();
};
