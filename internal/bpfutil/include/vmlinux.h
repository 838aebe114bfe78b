/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The few kernel types the BPF programs (internal/waketrace, internal/stacks,
 * internal/taskiter) read, declared by hand instead of a full generated
 * vmlinux.h (megabytes in the repository), one header for all of them.
 * preserve_access_index makes every field access a CO-RE relocation: the
 * loader finds each field's offset in the running kernel's BTF, so the
 * layout here need not match any one kernel, only the names. A program's
 * object keeps only the types it uses.
 */
#ifndef CTXTOP_VMLINUX_H
#define CTXTOP_VMLINUX_H

typedef unsigned char __u8;
typedef short int __s16;
typedef short unsigned int __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long int __s64;
typedef long long unsigned int __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
#define true 1
#define false 0

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1,
	BPF_F_MMAPABLE = 1024,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1,
};

#define TASK_COMM_LEN 16

struct rq {
	int cpu;
} __attribute__((preserve_access_index));

/* CONFIG_FAIR_GROUP_SCHED: the group run queue the entity is on, and its CPU's rq. */
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	unsigned char sched_delayed;
	struct cfs_rq *cfs_rq;
	u64 sum_exec_runtime;
	u64 nr_migrations;
} __attribute__((preserve_access_index));

/*
 * Timers: the callback running now on a CPU, if any. Per CPU, clock_base[]
 * holds the hard (interrupt) bases first, then as many soft (softirq) ones.
 */
struct hrtimer;
struct hrtimer_clock_base {
	struct hrtimer *running;
} __attribute__((preserve_access_index));
struct hrtimer_cpu_base {
	struct hrtimer_clock_base clock_base[8];
} __attribute__((preserve_access_index));
struct timer_list;
struct timer_base {
	struct timer_list *running_timer;
} __attribute__((preserve_access_index));

/* CONFIG_SCHED_INFO (selected by SCHEDSTATS or TASK_DELAY_ACCT). */
struct sched_info {
	unsigned long pcount;		/* times it has arrived on a CPU */
	unsigned long long run_delay;	/* ns runnable on a run queue */
} __attribute__((preserve_access_index));

struct cpumask {
	unsigned long bits[1];
} __attribute__((preserve_access_index));

/* Where the CPU a task last ran on lives since Linux 5.16 (x86, arm64, ...). */
struct thread_info {
	u32 cpu;
} __attribute__((preserve_access_index));

/* What the task walk asks of a process: how many threads it has. */
struct signal_struct {
	int nr_threads;
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info;
	int on_cpu;			/* CONFIG_SMP */
	int on_rq;
	unsigned int cpu;		/* ... and before */
	unsigned int __state;		/* "state" before 5.14 */
	long state;
	int exit_state;
	unsigned int flags;
	struct sched_entity se;
	struct sched_info sched_info;
	struct cpumask cpus_mask;
	int pid;
	int tgid;
	unsigned long nvcsw;
	unsigned long nivcsw;
	u64 start_boottime;
	char comm[TASK_COMM_LEN];
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* The task iterator's context. */
struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
} __attribute__((preserve_access_index));
struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* amd64's: where Go's ABIInternal keeps the current goroutine (g). */
struct pt_regs {
	unsigned long r14;
	unsigned long bp;
	unsigned long ip;
	unsigned long cs;
	unsigned long sp;
} __attribute__((preserve_access_index));

#endif
