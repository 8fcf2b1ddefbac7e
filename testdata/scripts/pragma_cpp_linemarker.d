# 50 "other.d"
BEGIN
{
	x = );
}
