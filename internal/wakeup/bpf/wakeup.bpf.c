// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Who wakes whom, aggregated in the kernel.
 *
 * sched_waking runs in the waker's context (current is the waker, on the
 * waker's CPU) and notes the waker in the wakee's task storage. When the
 * wakee is next switched in, sched_switch turns that note into one count
 * for the (waker, wakee) pair, a cross-CPU count when the wakee runs on
 * another CPU than the waker's, and one sample in the pair's log2
 * wake-to-run latency histogram. User space drains the pair map once per
 * refresh with a batch lookup-and-delete; nothing is sent per event.
 *
 * Programs are tp_btf (BTF-typed raw tracepoints): the cheapest attachment,
 * and the task pointers they get are read with CO-RE relocations.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Keep in step with PairMapSize and LatencyBuckets in Go. */
#define MAX_PAIRS 16384
#define LAT_BUCKETS 32

/*
 * A waking not yet followed by the wakee running. The waker's name is read
 * through its task pointer only when its pair is first counted in an
 * interval: copying it at every wake-up was a third of this program's cost.
 */
struct pending {
	u64 ts;
	u64 waker;
	u32 waker_tid;
	u32 waker_pid;
	u32 waker_cpu;
	u32 _pad;
};

struct pair_key {
	u32 waker_tid;
	u32 wakee_tid;
};

struct pair {
	u64 wakeups;
	u64 cross_cpu;
	u32 waker_pid;
	u32 wakee_pid;
	char waker_comm[TASK_COMM_LEN];
	char wakee_comm[TASK_COMM_LEN];
	/* latency[i]: wake-to-run in [2^i, 2^(i+1)) ns; the last bucket holds the rest. */
	u32 latency[LAT_BUCKETS];
};

/* One per CPU, a cache line each so CPUs do not bounce each other's line. */
struct cpu_stats {
	u64 switches;   /* written only by this CPU */
	u64 migrations; /* tasks moved onto this CPU */
	u64 dropped;    /* pairs not counted: the pair map was full */
	u64 _pad[5];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PAIRS);
	__type(key, struct pair_key);
	__type(value, struct pair);
} pair_map SEC(".maps");

/* max_entries is set to the number of possible CPUs at load time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_stats);
} cpu_stat_map SEC(".maps");

static __always_inline u32 log2_u64(u64 v)
{
	u32 r = 0, s;

	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFF) << 4; v >>= s; r |= s;
	s = (v > 0xFF) << 3; v >>= s; r |= s;
	s = (v > 0xF) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ctxtop_waking, struct task_struct *p)
{
	struct pending *pn;
	u64 id;

	pn = bpf_task_storage_get(&pending, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!pn)
		return 0;
	id = bpf_get_current_pid_tgid();
	pn->waker_tid = (u32)id;
	pn->waker_pid = id >> 32;
	pn->waker_cpu = bpf_get_smp_processor_id();
	pn->waker = bpf_get_current_task();
	pn->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ctxtop_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_stats *st;
	struct pending *pn;
	struct pair_key k;
	struct pair *v;
	u64 delta;
	u32 b;

	st = bpf_map_lookup_elem(&cpu_stat_map, &cpu);
	if (st)
		st->switches++;

	/*
	 * A waking noted while prev was running (woken before it had gone to
	 * sleep) never gets a switch-in of its own: forget it, or prev's next
	 * switch-in would count it with a made-up latency.
	 */
	pn = bpf_task_storage_get(&pending, prev, 0, 0);
	if (pn)
		pn->ts = 0;

	pn = bpf_task_storage_get(&pending, next, 0, 0);
	if (!pn || !pn->ts)
		return 0;
	delta = bpf_ktime_get_ns() - pn->ts;
	pn->ts = 0;
	b = log2_u64(delta);
	if (b >= LAT_BUCKETS)
		b = LAT_BUCKETS - 1;

	k.waker_tid = pn->waker_tid;
	k.wakee_tid = next->pid;
	/*
	 * Only the wakee's switch-in writes its pairs, and a task is switched
	 * in on one CPU at a time, so plain increments do not race.
	 */
	v = bpf_map_lookup_elem(&pair_map, &k);
	if (v) {
		v->wakeups++;
		if (pn->waker_cpu != cpu)
			v->cross_cpu++;
		v->latency[b & (LAT_BUCKETS - 1)]++;
		return 0;
	}

	struct pair nv = {};
	nv.wakeups = 1;
	nv.cross_cpu = pn->waker_cpu != cpu;
	nv.waker_pid = pn->waker_pid;
	nv.wakee_pid = next->tgid;
	/*
	 * Microseconds after its wake-up the waker is nearly always alive; if
	 * it exited, the read may give a stale name, never a fault.
	 */
	bpf_probe_read_kernel_str(nv.waker_comm, sizeof(nv.waker_comm), ((struct task_struct *)pn->waker)->comm);
	bpf_probe_read_kernel_str(nv.wakee_comm, sizeof(nv.wakee_comm), next->comm);
	nv.latency[b & (LAT_BUCKETS - 1)] = 1;
	if (bpf_map_update_elem(&pair_map, &k, &nv, BPF_NOEXIST) && st)
		__sync_fetch_and_add(&st->dropped, 1);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(ctxtop_migrate, struct task_struct *p, int dest_cpu)
{
	u32 cpu = dest_cpu;
	struct cpu_stats *st;

	st = bpf_map_lookup_elem(&cpu_stat_map, &cpu);
	if (st)
		__sync_fetch_and_add(&st->migrations, 1);
	return 0;
}
