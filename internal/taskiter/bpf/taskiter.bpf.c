// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Every thread's scheduler counters in one call: ctxtop_walk, run on demand
 * (BPF_PROG_RUN), walks the kernel's task list with the open-coded task
 * iterator and writes one fixed record per thread into an array that user
 * space maps and reads in place. No file per thread, no copy, one syscall
 * a pass.
 *
 * Why not a seq_file task iterator (SEC("iter/task"), read(2) through an
 * iterator link): the kernel finds each task of such an iterator by ID in
 * the PID radix tree and takes and drops a reference on it, and calls the
 * program through the seq_file machinery once per task; on a 2-vCPU guest
 * that costs some 0.5 us a task before the program does anything, 5 ms at
 * 10,000 threads, where this walk takes about 1 ms in all. ctxtop_seq
 * below writes the same records that way; the benchmark
 * BenchmarkWalkVsSeqIter keeps the comparison honest.
 *
 * The walk visits processes in creation order and each one's threads in
 * creation order (see below for what it skips): the same order pass after pass, newcomers at the end of
 * their list. Records hold what /proc formats from the same task_struct
 * fields: schedstat's three fields, status's switch counts, state and
 * Cpus_allowed, stat's start time and last CPU, and comm.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Keep in step with MaxMaskWords in Go: 1024 CPUs. */
#define MAX_MASK_WORDS 16

/* Task flags as the kernel defines them (include/linux/sched.h). */
#define PF_WQ_WORKER 0x00000020
#define PF_KTHREAD 0x00200000

/* Modes of bpf_iter_task_new (kernel/bpf/task_iter.c). */
#define BPF_TASK_ITER_ALL_THREADS 1

struct rec {
	u32 tid;
	u32 tgid;
	u64 start_ns; /* start_boottime: ns since boot, suspend included */
	u64 nvcsw;
	u64 nivcsw;
	u64 run_ns; /* se.sum_exec_runtime */
	u64 wait_ns; /* sched_info.run_delay */
	u64 pcount; /* sched_info.pcount */
	u32 cpu;
	u32 state; /* __state */
	s32 exit_state;
	u32 flags; /* PF_KTHREAD | PF_WQ_WORKER of task->flags */
	u64 nr_migrations; /* se.nr_migrations, sched's moves to another CPU */
	char comm[TASK_COMM_LEN];
	u64 mask[MAX_MASK_WORDS]; /* cpus_mask, mask_words of them */
};

/* Set by user space before loading. */
const volatile u32 mask_words = 1;
const volatile bool filter_tgid = false;

/*
 * The records. User space sizes the values (88 bytes and mask_words words)
 * and the count, maps the array, and loads a larger one when a walk finds
 * more threads than it holds. Only the size is declared here: the value is
 * shorter than struct rec.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(u32));
	__uint(value_size, __builtin_offsetof(struct rec, mask) + sizeof(u64));
} recs SEC(".maps");

/*
 * Which records the last walk wrote: element 0 holds how many, elements 1
 * on their indices in increasing order. User space sizes it one longer
 * than recs and maps it. A record not listed is byte for byte what it was
 * after the walk before, and describes the same thread at the same place
 * in the walk, which has not run since: user space need not read it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} changed SEC(".maps");

/*
 * Where the changed list's indices start: 1, after the count. A variable
 * rather than a constant so that the verifier does not know the key each
 * iteration looks up, which would make it tell every iteration of the loop
 * from the next by the count so far and give up. User space never sets
 * it, and checks the list (Changed) as it checks the records.
 */
u32 changed_first = 1;

/* The processes (tgid) to report when filter_tgid; user space sizes it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u8);
} targets SEC(".maps");

struct bpf_iter_task {
	__u64 __opaque[3];
} __attribute__((aligned(8)));

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

static __always_inline u32 cpu_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return t->thread_info.cpu;
	return t->cpu;
}

static __always_inline u32 state_of(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return (u32)t->state;
}

static __always_inline void fill(struct rec *r, struct task_struct *t)
{
	u32 words = mask_words;

	if (words > MAX_MASK_WORDS)
		words = MAX_MASK_WORDS;
	r->tid = t->pid;
	r->tgid = t->tgid;
	r->start_ns = t->start_boottime;
	r->nvcsw = t->nvcsw;
	r->nivcsw = t->nivcsw;
	r->run_ns = t->se.sum_exec_runtime;
	r->nr_migrations = t->se.nr_migrations;
	r->wait_ns = t->sched_info.run_delay;
	r->pcount = t->sched_info.pcount;
	r->cpu = cpu_of(t);
	r->state = state_of(t);
	r->exit_state = t->exit_state;
	r->flags = t->flags & (PF_KTHREAD | PF_WQ_WORKER);
	/*
	 * Plain loads where they do, a helper call only for a mask of more
	 * than 64 CPUs: at some 30 ns a call on a VM with retpolines, two
	 * calls a thread were a quarter of the walk.
	 */
	*(u64 *)&r->comm[0] = *(u64 *)&t->comm[0];
	*(u64 *)&r->comm[8] = *(u64 *)&t->comm[8];
	if (words == 1)
		r->mask[0] = t->cpus_mask.bits[0];
	else
		bpf_probe_read_kernel(&r->mask, words * sizeof(u64), &t->cpus_mask);
}

/*
 * Returns how many threads it found; only as many as the array holds were
 * written, and user space runs it again with a larger one when it found more.
 */
SEC("syscall")
int ctxtop_walk(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;
	struct rec *r;
	u64 *slot;
	u32 n = 0, d = 0, k, tgid;

	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		/* The walk starts at init_task, the boot CPU's idle task (PID
		 * 0), which /proc does not list. */
		if (t->pid == 0)
			continue;
		if (filter_tgid) {
			tgid = t->tgid;
			if (!bpf_map_lookup_elem(&targets, &tgid))
				continue;
		}
		r = bpf_map_lookup_elem(&recs, &n);
		/*
		 * The record left in this slot by the last walk is still
		 * exact when it is this thread's (its TID and start time) and
		 * its schedstat did not move: the thread has not run, so its
		 * switch counts, state and CPU have not changed either, and
		 * the /proc path does not re-read its name and affinity then.
		 * Reading four lines of the task_struct instead of ten is
		 * some of a walk over idle threads; most of it is the
		 * iterator's own step from task to task (ctxtop_count). A
		 * thread born or gone shifts the slots after it, which are
		 * then written afresh.
		 */
		if (r && !(r->tid == t->pid && r->start_ns == t->start_boottime &&
			   r->pcount == t->sched_info.pcount &&
			   r->run_ns == t->se.sum_exec_runtime &&
			   r->wait_ns == t->sched_info.run_delay)) {
			fill(r, t);
			k = changed_first + d;
			slot = bpf_map_lookup_elem(&changed, &k);
			if (slot) {
				*slot = n;
				d++;
			}
		}
		n++;
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	k = 0;
	slot = bpf_map_lookup_elem(&changed, &k);
	if (slot)
		*slot = d;
	return n;
}

/*
 * The walk alone, every task visited and nothing read but its PID: what
 * any walk of the task list costs, for the benchmark.
 */
SEC("syscall")
int ctxtop_count(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;
	u32 n = 0;

	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it)))
		if (t->pid != 0)
			n++;
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	return n;
}

/* The same records through a seq_file task iterator, for the benchmark. */
SEC("iter/task")
int ctxtop_seq(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct rec r = {};

	if (!t)
		return 0;
	fill(&r, t);
	bpf_seq_write(ctx->meta->seq, &r, __builtin_offsetof(struct rec, mask) + sizeof(u64));
	return 0;
}
