/*
 * No provider: dtrace -h still writes the header, with only the guard,
 * the include and the C++ block.
 */
BEGIN
{
	exit(0);
}
