#pragma ident "@(#)pragma_ident_line.d 1.1"
#ident "kdtrace test"
#pragma
#pragma D
#pragma unknown_thing is ignored
#
#line 100
BEGIN
{
	x = 1;
}
