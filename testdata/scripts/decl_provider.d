provider myapp {
	probe query__start(char *, int);
	probe query__done(char *q, int n) : (char *q, int n);
	probe tick();
};

provider other {
	probe ev(void);
};

myapp*:::query-start
{
	trace(arg1);
}
