BEGIN
{
	trace(1,);
}
