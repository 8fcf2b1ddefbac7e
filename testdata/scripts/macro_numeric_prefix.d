/* args: -s $FILE 1abc 0x1g 08 */
BEGIN
{
	a = $1;
	b = $2;
	c = $3;
}
