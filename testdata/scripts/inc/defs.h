#ifndef DEFS_H
#define DEFS_H
#define LIMIT	100
#define PROBE	syscall::read:entry
#define TWICE(x)	((x) * 2)
inline int FROM_HEADER = 7;
#endif
