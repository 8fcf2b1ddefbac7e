#pragma D option quiet
#pragma D option bufsize=4m
#pragma D option switchrate=10hz
  #pragma D option destructive

BEGIN
{
	x = 1;
}
