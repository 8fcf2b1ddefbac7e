/* Out-of-line helpers for inline.c, compiled with it into one executable. */
int ext(int x) { return x * 2; }
void sink(int x) { (void)x; }
int main(void) { return 0; }
asm(".globl __x86_return_thunk\n__x86_return_thunk:\n\tret\n"
    ".globl __x86_indirect_thunk_rax\n__x86_indirect_thunk_rax:\n\tjmp *%rax\n");
