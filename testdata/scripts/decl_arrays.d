int a[10];
char *names[4];
int matrix[3][4];
int assoc[int, string];
string smap[string];
long tuple[int, char, uint64_t];

BEGIN
{
	a[1] = 2;
	matrix[1][2] = 3;
	assoc[1, "x"] = 4;
	smap["k"] = "v";
	tuple[1, 'c', 3] = 5;
}
