BEGIN
{
	r1 = a + b * c;
	r2 = a * b + c;
	r3 = a - b - c;
	r4 = a << b + c;
	r5 = a < b == c > d;
	r6 = a & b ^ c | d;
	r7 = a && b ^^ c || d;
	r8 = a || b && c;
	r9 = a | b & c;
	r10 = a == b && c != d;
	r11 = a + b % c / d;
	r12 = a >> b << c;
	r13 = a <= b >= c;
	r14 = -a * !b + ~c;
	r15 = a ? b : c ? d : e;
	r16 = a || b ? c : d;
	r17 = (a + b) * c;
	r18 = a = b = c;
	r19 = *p->q;
	r20 = &a[1];
	r21 = -x++;
}
