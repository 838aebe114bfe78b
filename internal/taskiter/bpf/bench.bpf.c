// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Programs only the benchmarks load, kept out of the object the binary
 * embeds: the task list's bare step, and the walk's records through a
 * seq_file task iterator, to weigh ctxtop_walk against.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#include "rec.h"

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
