/* dtrace reports a binary operator once its parser has seen the token after
   the right operand: the ";" on line 7. */
BEGIN
{
	x = "a" *
	    2
	;
}
