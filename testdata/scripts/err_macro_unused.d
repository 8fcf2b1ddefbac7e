/* args: -s $FILE one two */
BEGIN
{
	x = $1;
}
