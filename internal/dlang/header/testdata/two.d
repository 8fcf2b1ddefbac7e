/*
 * Two providers, in declaration order, each with its own block; a later
 * redeclaration of the first adds nothing. The clause and other
 * declarations do not appear in the header.
 */
provider zeta {
	probe start(int id);
	probe stop(int id, int status);
};

provider alpha {
	probe go__now(char *who);
};

provider zeta {
	probe start(int);
};

inline int answer = 42;

BEGIN
{
	trace(answer);
}
