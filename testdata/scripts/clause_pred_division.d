BEGIN
/a / b > 2 && c /2/
{
	x = a / b / c;
}

END
/ (x / 3) /{ y = x %3 / 4; }

tick-1s
/x/ { }
