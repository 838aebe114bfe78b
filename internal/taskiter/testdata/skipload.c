/*
 * skipload N [churn]: N threads asleep on futexes, of which a driver wakes
 * one at random every 200 us for a while (20 to 80 ms), each running a
 * few us before it sleeps again, and then lets the whole process rest
 * (20 to 80 ms) with nothing woken, not even itself before the rest ends.
 * With "churn" the active spells also start short-lived threads (each
 * gone within 3 ms, before the rest begins) and end a sleeper and start
 * another in its place, so that the process's threads are born and exit
 * in the middle of its list. It prints "ready" once all threads run and
 * exits when its stdin reaches EOF.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STACK (64 << 10)

struct sleeper {
	int word;
	int quit;
};

static struct sleeper *sleepers;
static long n;
static int started, inflight, transient;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_us(unsigned us)
{
	unsigned long long end = now_ns() + us * 1000ULL;

	while (now_ns() < end)
		;
}

static void *sleeper(void *arg)
{
	struct sleeper *s = arg;
	int seen = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	for (;;) {
		syscall(SYS_futex, &s->word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
		int w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		int woken = w - seen; /* wakes since the last: each counted in flight */

		if (woken == 0)
			continue; /* spurious */
		seen = w;
		if (__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE)) {
			__atomic_sub_fetch(&inflight, woken, __ATOMIC_RELEASE);
			return NULL;
		}
		spin_us(rand() % 20);
		__atomic_sub_fetch(&inflight, woken, __ATOMIC_RELEASE);
	}
}

static void *brief(void *arg)
{
	struct timespec ts = {0, (long)(rand() % 3000) * 1000};

	(void)arg;
	nanosleep(&ts, NULL);
	spin_us(rand() % 50);
	__atomic_sub_fetch(&transient, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void start(pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	pthread_t th;
	int err;

	if ((err = pthread_create(&th, attr, fn, arg)) != 0) {
		fprintf(stderr, "thread: %s\n", strerror(err));
		exit(2);
	}
}

static void wake(struct sleeper *s)
{
	__atomic_add_fetch(&inflight, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *driver(void *arg)
{
	int churn = arg != NULL;
	pthread_attr_t attr;
	struct timespec tick = {0, 200000};

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		unsigned long long end = now_ns() + (20 + rand() % 60) * 1000000ULL;
		int k = 0;

		while (now_ns() < end) {
			wake(&sleepers[rand() % n]);
			if (churn && k % 10 == 0) {
				__atomic_add_fetch(&transient, 1, __ATOMIC_RELAXED);
				start(&attr, brief, NULL);
			}
			if (churn && k % 50 == 0) {
				/* Replace a sleeper: one exits, a new one starts. */
				long i = rand() % n;
				struct sleeper *s = calloc(1, sizeof *s);

				__atomic_store_n(&sleepers[i].quit, 1, __ATOMIC_RELEASE);
				wake(&sleepers[i]);
				while (__atomic_load_n(&inflight, __ATOMIC_ACQUIRE) > 0)
					;
				sleepers[i] = *s; /* the old one has read quit and gone */
				free(s);
				start(&attr, sleeper, &sleepers[i]);
			}
			k++;
			nanosleep(&tick, NULL);
		}
		/* Rest: nothing of the process runs until it ends. */
		while (__atomic_load_n(&inflight, __ATOMIC_ACQUIRE) > 0 ||
		       __atomic_load_n(&transient, __ATOMIC_ACQUIRE) > 0)
			nanosleep(&tick, NULL);
		struct timespec rest = {0, (long)(20 + rand() % 60) * 1000000};
		nanosleep(&rest, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	char buf[64];
	long i;

	n = argc > 1 ? atol(argv[1]) : 1;
	if (n < 1)
		n = 1;
	srand(getpid());
	sleepers = calloc(n, sizeof *sleepers);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 0; i < n; i++)
		start(&attr, sleeper, &sleepers[i]);
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < n)
		usleep(1000);
	start(&attr, driver, argc > 2 && strcmp(argv[2], "churn") == 0 ? (void *)1 : NULL);
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}
