/* args: -s $FILE a b */
BEGIN
{
	x = $1;
	y = $2;
	z = $3;
}
