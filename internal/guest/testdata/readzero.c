/* readzero makes exactly N one-byte read(2)s of /dev/zero and nothing
 * else that reaches vfs_read, so a probe on the read path fires N times.
 * With -s FILE it makes N sendfile(2)s of FILE's first byte to /dev/null
 * instead, each one through do_sendfile once.
 * Built static: the guest has no dynamic loader. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

static int sendfiles(long n, const char *path) {
	int in = open(path, O_RDONLY), out = open("/dev/null", O_WRONLY);
	long i;

	if (in < 0 || out < 0) {
		perror(in < 0 ? path : "/dev/null");
		return 1;
	}
	for (i = 0; i < n; i++) {
		off_t off = 0;
		if (sendfile(out, in, &off, 1) != 1) {
			perror("sendfile");
			return 1;
		}
	}
	printf("readzero: %ld sendfiles\n", n);
	return 0;
}

int main(int argc, char **argv) {
	long n;
	int fd;
	char c;
	long i;

	if (argc == 4 && strcmp(argv[1], "-s") == 0)
		return sendfiles(atol(argv[2]), argv[3]);
	n = argc > 1 ? atol(argv[1]) : 1;
	fd = open("/dev/zero", O_RDONLY);
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
