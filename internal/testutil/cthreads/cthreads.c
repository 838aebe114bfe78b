/*
 * cthreads N [busy]: a process of N idle threads, cheap enough to start
 * 100,000 of. Each thread has a 16 KiB stack carved from one mapping (a
 * mapping per thread would run into vm.max_map_count) and sleeps on a
 * futex for good. With "busy" one more thread wakes every millisecond, as
 * a heartbeat in a real pool would. It prints "ready" once all threads
 * run; then each line on its stdin starts one more idle thread, answered
 * "ok" once it runs (a process that grows mid-run), but "rename NAME",
 * which names the main thread NAME, answered "ok" too; it exits when its
 * stdin reaches EOF.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STACK (16 << 10)

static int never;
static int started;

static void *idle(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	for (;;)
		syscall(SYS_futex, &never, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return NULL;
}

static void *busy(void *arg)
{
	struct timespec ms = {0, 1000000};
	(void)arg;
	for (;;)
		nanosleep(&ms, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	char *stacks, buf[64];
	pthread_attr_t attr;
	pthread_t th;
	long i;
	int err;

	stacks = mmap(NULL, (size_t)n * STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (n > 0 && stacks == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	pthread_attr_init(&attr);
	for (i = 0; i < n; i++) {
		pthread_attr_setstack(&attr, stacks + i * STACK, STACK);
		if ((err = pthread_create(&th, &attr, idle, NULL)) != 0) {
			fprintf(stderr, "thread %ld: %s\n", i, strerror(err));
			return 2;
		}
	}
	if (argc > 2 && strcmp(argv[2], "busy") == 0) {
		pthread_attr_init(&attr);
		if ((err = pthread_create(&th, &attr, busy, NULL)) != 0) {
			fprintf(stderr, "busy thread: %s\n", strerror(err));
			return 2;
		}
	}
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < n)
		usleep(1000);
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof buf, stdin)) {
		if (strncmp(buf, "rename ", 7) == 0) {
			buf[strcspn(buf, "\n")] = 0;
			prctl(PR_SET_NAME, buf + 7);
			printf("ok\n");
			fflush(stdout);
			continue;
		}
		long want = __atomic_load_n(&started, __ATOMIC_RELAXED) + 1;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, STACK);
		if ((err = pthread_create(&th, &attr, idle, NULL)) != 0) {
			fprintf(stderr, "thread: %s\n", strerror(err));
			return 2;
		}
		while (__atomic_load_n(&started, __ATOMIC_RELAXED) < want)
			usleep(100);
		printf("ok\n");
		fflush(stdout);
	}
	return 0;
}
