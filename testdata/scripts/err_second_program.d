/* args: -n BEGIN{x=1;} -s $FILE */
BEGIN
{
	x = ;
}
