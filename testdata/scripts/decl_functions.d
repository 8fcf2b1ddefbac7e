extern int foo(int, char *);
extern void bar(void);
extern int (*fp)(int a, int b);
extern int vfn(int, ...);
int *(*table[4])(void);

BEGIN
{
	trace(1);
}
