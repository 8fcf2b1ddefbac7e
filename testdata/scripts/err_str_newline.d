BEGIN
{
	s = "no end;
}
