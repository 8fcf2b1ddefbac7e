BEGIN
{
	a = curthread->td_proc->p_pid;
	b = s.x.y;
	c = p->q.r->s;
	d = (*p).x;
	e = a[1].x;
	f = x->probe;
	g = x->provider;
	h = x.self;
	i = x->string;
	j = x.stringof;
	k = x->userland;
	l = x.xlate;
	m = x->translator;
	n = args[0]->b_bcount;
}
