/* args: -C */
#define X 1

BEGIN
{
	x = X;
	y = );
}
