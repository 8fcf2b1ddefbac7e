const int ci;
volatile unsigned long vul;
const volatile char *restrict cp;
int *const *volatile pp;
unsigned u;
signed char sc;
long long ll;
unsigned long long ull;
short int si;
long double ld;

BEGIN
{
	x = ci + vul;
}
