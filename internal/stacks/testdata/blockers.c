/*
 * A program whose thread "mixed" blocks in known functions, woken from
 * known functions, counting how often it really blocked: the test compares
 * ctxtop's shares of stacks with these counts.
 *
 * mixed reads a pipe in reader_loop three times, then waits on a condition
 * variable (a futex word) in consumer_wait once, over and over. "driver"
 * wakes it: writer_loop writes a byte to the pipe (three times), then calls
 * producer_put, which signals the condition variable; before each step it
 * waits until mixed says it is about to block.
 *
 * The blocking and waking system calls are made here, not through libc:
 * a libc built without frame pointers (most distributions') ends a stack
 * walk in its own code, and the test is about what ctxtop captures, not
 * about the distribution's libc.
 *
 * A read counts as a wait when poll found the pipe empty just before; a
 * futex wait when the kernel says it slept (returned 0). Every 100 ms the
 * program prints "reads=R conds=C".
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static atomic_int ready, about_to_block;
static atomic_long reads, conds;

static inline long raw_syscall3(long n, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return ret;
}

static inline long raw_syscall4(long n, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
}

static void pause_us(long us)
{
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void consumer_wait(void)
{
	while (!atomic_load(&ready)) {
		about_to_block = 1;
		if (raw_syscall4(SYS_futex, (long)&ready, FUTEX_WAIT_PRIVATE, 0, 0) == 0)
			conds++;
	}
	ready = 0;
}

__attribute__((noinline)) void reader_loop(int n)
{
	char c;
	for (int i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		about_to_block = 1;
		if (poll(&p, 1, 0) == 0)
			reads++;
		if (raw_syscall3(SYS_read, fds[0], (long)&c, 1) != 1)
			return;
	}
}

__attribute__((noinline)) void producer_put(void)
{
	atomic_store(&ready, 1);
	raw_syscall3(SYS_futex, (long)&ready, FUTEX_WAKE_PRIVATE, 1);
}

/* wait_for_sleeper gives mixed a moment to go to sleep after it said so. */
static void wait_for_sleeper(void)
{
	for (int i = 0; i < 1000 && !atomic_exchange(&about_to_block, 0); i++)
		pause_us(50);
	pause_us(200);
}

__attribute__((noinline)) void writer_loop(void)
{
	for (;;) {
		for (int i = 0; i < 3; i++) {
			wait_for_sleeper();
			if (raw_syscall3(SYS_write, fds[1], (long)"x", 1) != 1)
				return;
		}
		wait_for_sleeper();
		producer_put();
	}
}

static void *mixed(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "mixed");
	for (;;) {
		reader_loop(3);
		consumer_wait();
	}
	return NULL;
}

static void *driver(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "driver");
	writer_loop();
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	if (pipe(fds))
		return 1;
	pthread_create(&a, NULL, mixed, NULL);
	pthread_create(&b, NULL, driver, NULL);
	for (;;) {
		printf("reads=%ld conds=%ld\n", (long)reads, (long)conds);
		fflush(stdout);
		pause_us(100000);
	}
}
