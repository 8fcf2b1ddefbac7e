BEGIN
{
	x = 1;
}
#error "this is" an error 3 here
