/* args: -n BEGIN{x=1;} -s $FILE -n END */
tick-1s
{
	trace(x);
}
