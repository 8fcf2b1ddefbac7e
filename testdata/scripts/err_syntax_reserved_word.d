int counter;

BEGIN
{
	counter = 1;
}
