#pragma D binding "1.0" myvar
inline int myvar = 3;
#pragma D attributes Evolving/Evolving/Common myvar
int other;
#pragma D attributes Stable/Stable/Common other
#pragma D binding "1.5" other2
inline int other2 = 4;

BEGIN
{
	x = myvar + other2;
	y = other;
}
