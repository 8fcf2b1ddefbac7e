/* readzero makes exactly N one-byte read(2)s of /dev/zero and nothing
 * else that reaches vfs_read, so a probe on the read path fires N times.
 * With -s FILE it makes N sendfile(2)s of FILE's first byte to /dev/null
 * instead, each one through do_sendfile once. With -z FILE it makes N
 * one-byte reads of FILE, which must be empty, each returning 0: vfs_read
 * runs without its inline calls of add_rchar and fsnotify_access, which
 * are made only for a read that returned bytes. With -v it makes N
 * one-byte readv(2)s of /dev/zero instead, through do_readv's and
 * do_iter_read's inline copies of add_rchar and fsnotify_access. With -p
 * it writes one byte to a pipe and reads it back N times: each write(2)
 * and read(2) takes and releases the pipe's mutex once.
 * Built static: the guest has no dynamic loader. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
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

static int eofreads(long n, const char *path) {
	int fd = open(path, O_RDONLY);
	char c;
	long i;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (i = 0; i < n; i++)
		if (read(fd, &c, 1) != 0) {
			fprintf(stderr, "readzero: %s is not empty\n", path);
			return 1;
		}
	printf("readzero: %ld reads at EOF\n", n);
	return 0;
}

static int readvs(long n) {
	int fd = open("/dev/zero", O_RDONLY);
	char c;
	struct iovec iov = { &c, 1 };
	long i;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (readv(fd, &iov, 1) != 1) {
			perror("readv");
			return 1;
		}
	printf("readzero: %ld readvs\n", n);
	return 0;
}

static int pipes(long n) {
	int fds[2];
	char c = 'x';
	long i;

	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1) {
			perror("pipe");
			return 1;
		}
	printf("readzero: %ld pipe round trips\n", n);
	return 0;
}

int main(int argc, char **argv) {
	long n;
	int fd;
	char c;
	long i;

	if (argc == 4 && strcmp(argv[1], "-s") == 0)
		return sendfiles(atol(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "-z") == 0)
		return eofreads(atol(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "-v") == 0)
		return readvs(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "-p") == 0)
		return pipes(atol(argv[2]));
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
