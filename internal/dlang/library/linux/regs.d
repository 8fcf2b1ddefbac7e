/*
 * regs.d: indices into regs[] and uregs[] on x86-64.
 *
 * The indices are those of illumos and FreeBSD, so that scripts written
 * there run unchanged: first the i386 register names, 0 to 18, then the
 * amd64 names at 19 plus the register's number in the amd64 gregset
 * (REG_R15 is 0, REG_RAX 14, REG_RIP 17, REG_GSBASE 27).
 *
 * The runtime maps each index to a member of the kernel's struct
 * pt_regs, as dtrace_getreg maps it to a trap frame. An i386 name reads
 * the whole 64-bit register it names (R_EAX is ax, R_EIP is ip, R_UESP
 * and R_ESP are sp, R_EFL is flags), and R_ERR is orig_ax, where the
 * kernel saves an exception's error code or the system call number.
 * pt_regs does not hold %ds, %es, %fs, %gs, the trap number or the
 * segment bases.
 */

inline int R_GS = 0;
#pragma D binding "1.0" R_GS
inline int R_FS = 1;
#pragma D binding "1.0" R_FS
inline int R_ES = 2;
#pragma D binding "1.0" R_ES
inline int R_DS = 3;
#pragma D binding "1.0" R_DS
inline int R_EDI = 4;
#pragma D binding "1.0" R_EDI
inline int R_ESI = 5;
#pragma D binding "1.0" R_ESI
inline int R_EBP = 6;
#pragma D binding "1.0" R_EBP
inline int R_ESP = 7;
#pragma D binding "1.0" R_ESP
inline int R_EBX = 8;
#pragma D binding "1.0" R_EBX
inline int R_EDX = 9;
#pragma D binding "1.0" R_EDX
inline int R_ECX = 10;
#pragma D binding "1.0" R_ECX
inline int R_EAX = 11;
#pragma D binding "1.0" R_EAX
inline int R_TRAPNO = 12;
#pragma D binding "1.0" R_TRAPNO
inline int R_ERR = 13;
#pragma D binding "1.0" R_ERR
inline int R_EIP = 14;
#pragma D binding "1.0" R_EIP
inline int R_CS = 15;
#pragma D binding "1.0" R_CS
inline int R_EFL = 16;
#pragma D binding "1.0" R_EFL
inline int R_UESP = 17;
#pragma D binding "1.0" R_UESP
inline int R_SS = 18;
#pragma D binding "1.0" R_SS

/* Names that mean the same register on every architecture. */
inline int R_PC = R_EIP;
#pragma D binding "1.0" R_PC
inline int R_FP = R_EBP;
#pragma D binding "1.0" R_FP
inline int R_SP = R_UESP;
#pragma D binding "1.0" R_SP
inline int R_PS = R_EFL;
#pragma D binding "1.0" R_PS
inline int R_R0 = R_EAX;
#pragma D binding "1.0" R_R0
inline int R_R1 = R_EBX;
#pragma D binding "1.0" R_R1

/* The amd64 names: R_SS + 1 + the register's gregset number. */
inline int R_R15 = 19;
#pragma D binding "1.0" R_R15
inline int R_R14 = 20;
#pragma D binding "1.0" R_R14
inline int R_R13 = 21;
#pragma D binding "1.0" R_R13
inline int R_R12 = 22;
#pragma D binding "1.0" R_R12
inline int R_R11 = 23;
#pragma D binding "1.0" R_R11
inline int R_R10 = 24;
#pragma D binding "1.0" R_R10
inline int R_R9 = 25;
#pragma D binding "1.0" R_R9
inline int R_R8 = 26;
#pragma D binding "1.0" R_R8
inline int R_RDI = 27;
#pragma D binding "1.0" R_RDI
inline int R_RSI = 28;
#pragma D binding "1.0" R_RSI
inline int R_RBP = 29;
#pragma D binding "1.0" R_RBP
inline int R_RBX = 30;
#pragma D binding "1.0" R_RBX
inline int R_RDX = 31;
#pragma D binding "1.0" R_RDX
inline int R_RCX = 32;
#pragma D binding "1.0" R_RCX
inline int R_RAX = 33;
#pragma D binding "1.0" R_RAX
inline int R_RIP = 36;
#pragma D binding "1.0" R_RIP
inline int R_RFL = 38;
#pragma D binding "1.0" R_RFL
inline int R_RSP = 39;
#pragma D binding "1.0" R_RSP
inline int R_FSBASE = 45;
#pragma D binding "1.0" R_FSBASE
inline int R_GSBASE = 46;
#pragma D binding "1.0" R_GSBASE
