/* args: -s $FILE -n BEGIN{if(a)b=1;} */
tick-1s
{
	if (x)
		y = 1;
}
