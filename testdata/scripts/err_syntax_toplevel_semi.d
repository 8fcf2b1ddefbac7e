BEGIN
{
	x = 1;
};
