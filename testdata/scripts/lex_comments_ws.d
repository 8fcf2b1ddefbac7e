#!/usr/sbin/dtrace -s
/* a comment */ BEGIN /* between */
{	/* inside
	   several lines */
	x = 1; /* trailing */
	y /* mid */ = /**/ 2;
	z = 3 \
	+ 4;
}
/* comment between clauses */

END{trace(x);}
