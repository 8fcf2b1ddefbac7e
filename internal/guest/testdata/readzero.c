/* readzero makes exactly N one-byte read(2)s of /dev/zero and nothing
 * else that reaches vfs_read, so a probe on the read path fires N times.
 * Built static: the guest has no dynamic loader. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1;
	int fd = open("/dev/zero", O_RDONLY);
	char c;
	long i;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (read(fd, &c, 1) != 1) {
			perror("read");
			return 1;
		}
	printf("readzero: %ld reads\n", n);
	return 0;
}
