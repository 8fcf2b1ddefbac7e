/*
 * unistd.d: the fault codes that the ERROR probe reports in arg4, as
 * dtrace's sys/dtrace.h numbers them.
 */

inline int DTRACEFLT_UNKNOWN = 0;
#pragma D binding "1.0" DTRACEFLT_UNKNOWN
inline int DTRACEFLT_BADADDR = 1;
#pragma D binding "1.0" DTRACEFLT_BADADDR
inline int DTRACEFLT_BADALIGN = 2;
#pragma D binding "1.0" DTRACEFLT_BADALIGN
inline int DTRACEFLT_ILLOP = 3;
#pragma D binding "1.0" DTRACEFLT_ILLOP
inline int DTRACEFLT_DIVZERO = 4;
#pragma D binding "1.0" DTRACEFLT_DIVZERO
inline int DTRACEFLT_NOSCRATCH = 5;
#pragma D binding "1.0" DTRACEFLT_NOSCRATCH
inline int DTRACEFLT_KPRIV = 6;
#pragma D binding "1.0" DTRACEFLT_KPRIV
inline int DTRACEFLT_UPRIV = 7;
#pragma D binding "1.0" DTRACEFLT_UPRIV
inline int DTRACEFLT_TUPOFLOW = 8;
#pragma D binding "1.0" DTRACEFLT_TUPOFLOW
inline int DTRACEFLT_BADSTACK = 9;
#pragma D binding "1.4.1" DTRACEFLT_BADSTACK
inline int DTRACEFLT_LIBRARY = 1000;
#pragma D binding "1.0" DTRACEFLT_LIBRARY
