/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The few kernel types waketrace.bpf.c reads, declared by hand instead of a
 * full generated vmlinux.h (megabytes in the repository). preserve_access_index
 * makes every field access a CO-RE relocation: the loader finds each field's
 * offset in the running kernel's BTF, so the layout here need not match any
 * one kernel, only the names.
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
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1,
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
} __attribute__((preserve_access_index));
/* Where the CPU a task last ran on lives since Linux 5.16 (x86, arm64, ...). */
struct thread_info {
	u32 cpu;
} __attribute__((preserve_access_index));
struct task_struct {
	struct thread_info thread_info;
	unsigned int cpu;		/* ... and before */
	struct sched_info sched_info;
	struct sched_entity se;
	int pid;
	int tgid;
	char comm[TASK_COMM_LEN];
	int on_rq;
} __attribute__((preserve_access_index));

#endif
