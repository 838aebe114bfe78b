// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * What the walk (taskiter.bpf.c) and the benchmarks' programs
 * (bench.bpf.c) share: the record, how a task fills it, and the task
 * iterator's kfuncs. Each object that includes it sets its own mask_words.
 */
#ifndef CTXTOP_REC_H
#define CTXTOP_REC_H

/* Keep in step with MaxMaskWords in Go: 1024 CPUs. */
#define MAX_MASK_WORDS 16

/* Task flags as the kernel defines them (include/linux/sched.h). */
#define PF_WQ_WORKER 0x00000020
#define PF_KTHREAD 0x00200000

/* Modes of bpf_iter_task_new (kernel/bpf/task_iter.c). */
#define BPF_TASK_ITER_ALL_PROCS 0
#define BPF_TASK_ITER_ALL_THREADS 1
#define BPF_TASK_ITER_PROC_THREADS 2

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

struct bpf_iter_task {
	__u64 __opaque[3];
} __attribute__((aligned(8)));

extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;
extern struct task_struct *bpf_task_acquire(struct task_struct *p) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

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

#endif
