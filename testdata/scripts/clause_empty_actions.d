BEGIN
{
}

END
/x == 0/
{
}

tick-1s {}
