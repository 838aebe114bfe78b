/*
 * cfloor ROOT PID: the floor of any /proc poller. It opens every thread's
 * ROOT/PID/task/TID/schedstat once and keeps the files open; then for each
 * line on stdin it preads all of them, as the sampler's /proc path does at
 * the least, and prints the CPU time that pass took in nanoseconds and the
 * CPU it ran on. A line "pass N" preads the first N files only: a floor
 * pass as short as another program's, so that a host's hiccup of a given
 * size weighs on both alike. A line "every MS N K" makes N pairs of passes
 * on its own clock, the first pair MS/2 ms from then and one every MS ms
 * after: a pass over the first K files, and 50 ms later one over all of
 * them; then prints a line "K_NS ALL_NS" for each pair. Pacing itself, it
 * leaves the program it is compared with no I/O to do between its own
 * passes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int pass(int *fds, int k)
{
	char buf[256];
	int i;

	for (i = 0; i < k; i++)
		if (pread(fds[i], buf, sizeof buf, 0) < 0)
			return -1;
	return 0;
}

static void sleep_until(struct timespec *t, long long ns)
{
	t->tv_nsec += ns % 1000000000LL;
	t->tv_sec += ns / 1000000000LL + t->tv_nsec / 1000000000LL;
	t->tv_nsec %= 1000000000LL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL))
		;
}

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char path[4096], line[64];
	int *fds = NULL, n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	if (argc != 3) {
		fprintf(stderr, "usage: cfloor ROOT PID\n");
		return 2;
	}
	snprintf(path, sizeof path, "%s/%s/task", argv[1], argv[2]);
	if (!(d = opendir(path))) {
		perror(path);
		return 2;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/task/%s/schedstat", argv[1], argv[2], e->d_name);
		if (n == cap && !(fds = realloc(fds, (cap = cap ? 2 * cap : 1024) * sizeof *fds)))
			return 2;
		if ((fds[n] = open(path, O_RDONLY)) >= 0)
			n++;
	}
	closedir(d);
	printf("%d\n", n);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		int k = n, every, count, j;
		long long t0, *out;
		struct timespec at;

		if (sscanf(line, "every %d %d %d", &every, &count, &k) == 3 && every > 0 && count > 0) {
			if (k < 0 || k > n)
				k = n;
			if (!(out = calloc(2 * (size_t)count, sizeof *out)))
				return 2;
			clock_gettime(CLOCK_MONOTONIC, &at);
			sleep_until(&at, every * 500000LL);
			for (j = 0; j < count; j++) {
				if (j)
					sleep_until(&at, every * 1000000LL);
				t0 = cpu_ns();
				if (pass(fds, k))
					return 1;
				out[2 * j] = cpu_ns() - t0;
				usleep(50000);
				t0 = cpu_ns();
				if (pass(fds, n))
					return 1;
				out[2 * j + 1] = cpu_ns() - t0;
			}
			for (j = 0; j < count; j++)
				printf("%lld %lld\n", out[2 * j], out[2 * j + 1]);
			fflush(stdout);
			free(out);
			continue;
		}

		if (sscanf(line, "pass %d", &k) == 1 && (k < 0 || k > n))
			k = n;
		t0 = cpu_ns();
		if (pass(fds, k))
			return 1;
		t0 = cpu_ns() - t0;
		printf("%lld %d\n", t0, sched_getcpu());
		fflush(stdout);
	}
	return 0;
}
