/*
 * cworkers NAME N PERIOD_US: a process named NAME (its main thread's comm)
 * with N threads named worker-1 .. worker-N, each waking every PERIOD_US
 * microseconds: a steady rate of voluntary switches per thread at little
 * CPU, as a pool of timer-driven workers has. The main thread sleeps in a
 * read of stdin. It prints "ready" once all threads run and exits when its
 * stdin reaches EOF.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static struct timespec period;
static int started;

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "worker-%ld", (long)arg);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	for (;;)
		nanosleep(&period, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	char buf[64];
	pthread_t th;
	long i, n, us;

	if (argc != 4 || (n = atol(argv[2])) < 1 || (us = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: cworkers NAME N PERIOD_US\n");
		return 2;
	}
	prctl(PR_SET_NAME, argv[1], 0, 0, 0);
	period.tv_sec = us / 1000000;
	period.tv_nsec = us % 1000000 * 1000;
	for (i = 1; i <= n; i++)
		if (pthread_create(&th, NULL, worker, (void *)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < n)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}
