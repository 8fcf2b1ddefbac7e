BEGIN
{
	_x = 1;
	x_1 = 2;
	X = 3;
	counter1 = _x + x_1 + X;
	selfish = 1;
	thisone = 2;
	inliner = 3;
	stringy = "s";
	probefunc_copy = probefunc;
	sizeofx = 4;
}
