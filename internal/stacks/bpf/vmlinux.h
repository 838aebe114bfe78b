/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/*
 * The few kernel types stacks.bpf.c reads, declared by hand (as in
 * internal/waketrace) instead of a generated vmlinux.h of megabytes. Every
 * field access is a CO-RE relocation, so only the names must match.
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
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

#define TASK_COMM_LEN 16

struct rq {
	int cpu;
} __attribute__((preserve_access_index));

struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	unsigned char sched_delayed;
	struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state;
	struct sched_entity se;
	int pid;
	int tgid;
	char comm[TASK_COMM_LEN];
	int on_rq;
} __attribute__((preserve_access_index));

/* amd64's: where Go's ABIInternal keeps the current goroutine (g). */
struct pt_regs {
	unsigned long r14;
} __attribute__((preserve_access_index));

#endif
