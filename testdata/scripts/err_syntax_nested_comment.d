BEGIN
{
	/* outer /* inner */
	x = 1;
}
