/*
 * Pointer, struct and typedef arguments. Qualifiers are lost and integer
 * types take their canonical names, as in dtrace.
 */
typedef unsigned int uint32_t;
typedef struct request request_t;

struct conn {
	int fd;
	char *peer;
};

provider srv {
	probe request(const char *path, struct conn *c, request_t *req);
	probe reply(struct conn c, uint32_t status, long int len);
	probe callback(void (*fn)(int), void *arg, char **argv);
	probe buffer(int buf[16], unsigned len);
	probe misc(signed char c, short int s, long unsigned u, long long ll,
	    unsigned long long ull, double d, long double ld, float f);
};
