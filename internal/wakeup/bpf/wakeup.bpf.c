// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Who wakes whom, aggregated in the kernel.
 *
 * sched_waking runs in the waker's context (current is the waker, on the
 * waker's CPU) and leaves a note for the wakee in its slot of a fixed
 * table, chosen by a hash of the wakee's thread ID. When the wakee is next
 * switched in, sched_switch finds its note and counts one wake-up for the
 * (waker, wakee) pair, a cross-CPU one when the wakee runs on another CPU
 * than the waker's, and, for timed wake-ups, one sample in the pair's log2
 * wake-to-run latency histogram. A busy wakee's counts gather in its slot
 * while its waker stays the same and reach the pair map about once a
 * jiffy; user space drains the pair map once per refresh with a batch
 * lookup-and-delete; nothing is sent per event.
 *
 * A table slot, not task storage, because a slot is a plain array element,
 * which the verifier inlines: a task-storage lookup cost about 40 ns here,
 * and sched_switch runs at every switch, most of which end no sleep. Two
 * wakees pending at once in one slot lose the first's wake-up: with n
 * wakees pending at any moment, about n in NOTE_SLOTS wake-ups (an
 * estimate from the table's size).
 *
 * Programs are tp_btf (BTF-typed raw tracepoints): the cheapest attachment,
 * and the task pointers they get are read with CO-RE relocations.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Keep in step with PairMapSize and LatencyBuckets in Go. */
#define MAX_PAIRS 16384
#define LAT_BUCKETS 32

/* NOTE_SLOTS: keep in step with NoteSlots in Go, which checks it. */
#define TIMED_PER_JIFFY 8
#define NOTE_SLOTS_LOG2 14
#define NOTE_SLOTS (1 << NOTE_SLOTS_LOG2)

/*
 * A wakee's slot: the note of a waking not yet followed by the wakee
 * running (tid is the wakee, 0 once taken), and how often the slot's owner
 * has been woken lately, to choose which wake-ups to time. One cache line.
 */
struct note {
	u32 tid;
	u32 waker_tid;
	u32 waker_pid;
	u32 waker_cpu;
	u64 ts;		/* when it was woken, if this wake-up is timed; else 0 */
	u32 owner;	/* the wakee whose the fields below are */
	u32 owner_pid;
	u32 last_waker_tid;
	u32 jif;	/* low bits of the jiffy in_jif counts */
	u32 in_jif;
	u32 mask;	/* timing stride - 1 */
	char waker_comm[TASK_COMM_LEN];
	char owner_comm[TASK_COMM_LEN];
	/*
	 * The owner's counts for the pair (cw_tid -> owner) not yet added to
	 * pair_map: they gather here while its waker stays the same, and are
	 * added to the map when another waker wakes it, at its first wake-up
	 * in a new jiffy (flush_jif), or when another wakee takes the slot, so
	 * the map is looked up about once a jiffy per busy wakee instead of at
	 * every wake-up.
	 */
	u32 cw_tid;
	u32 cw_pid;
	u32 flush_jif;
	u32 _pad;
	char cw_comm[TASK_COMM_LEN];
	u64 cw_wakeups;
	u64 cw_cross;
	u32 cw_latency[LAT_BUCKETS];
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
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NOTE_SLOTS);
	__type(key, u32);
	__type(value, struct note);
} notes SEC(".maps");

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

/* Not a thread ID: 0 is every CPU's idle task, a waker like any other. */
#define NO_TID 0xffffffffu

static __always_inline u32 slot_of(u32 tid)
{
	return (tid * 2654435761u) >> (32 - NOTE_SLOTS_LOG2);
}

static __always_inline void clear_counts(struct note *n)
{
	n->cw_wakeups = 0;
	n->cw_cross = 0;
	for (int i = 0; i < LAT_BUCKETS; i++)
		n->cw_latency[i] = 0;
}

/* flush adds a slot's cached pair counts to pair_map and clears them. */
static __always_inline void flush(struct note *n)
{
	struct pair_key k;
	struct pair *v;
	int i;

	if (!n->cw_wakeups)
		return;
	k.waker_tid = n->cw_tid;
	k.wakee_tid = n->owner;
	/*
	 * The owner's switch-in, or a waking that takes the slot from it,
	 * writes these pairs; both at once would take two wakees pending in
	 * one slot, as rare as losing a note.
	 */
	v = bpf_map_lookup_elem(&pair_map, &k);
	if (v) {
		v->wakeups += n->cw_wakeups;
		v->cross_cpu += n->cw_cross;
		for (i = 0; i < LAT_BUCKETS; i++)
			v->latency[i] += n->cw_latency[i];
	} else {
		struct pair nv = {};

		nv.wakeups = n->cw_wakeups;
		nv.cross_cpu = n->cw_cross;
		nv.waker_pid = n->cw_pid;
		nv.wakee_pid = n->owner_pid;
		__builtin_memcpy(nv.waker_comm, n->cw_comm, sizeof(nv.waker_comm));
		__builtin_memcpy(nv.wakee_comm, n->owner_comm, sizeof(nv.wakee_comm));
		for (i = 0; i < LAT_BUCKETS; i++)
			nv.latency[i] = n->cw_latency[i];
		if (bpf_map_update_elem(&pair_map, &k, &nv, BPF_NOEXIST)) {
			u32 cpu = bpf_get_smp_processor_id();
			struct cpu_stats *st = bpf_map_lookup_elem(&cpu_stat_map, &cpu);

			if (st)
				__sync_fetch_and_add(&st->dropped, n->cw_wakeups);
		}
	}
	clear_counts(n);
}

/*
 * Reading the clock costs as much as the rest of a program (some 50 ns in
 * a VM), so a wakee woken more than TIMED_PER_JIFFY times in a jiffy has
 * only every 2^k-th wake-up timed, the stride chosen from its previous
 * jiffy so that about TIMED_PER_JIFFY a jiffy are; a wake-up by another
 * waker than the last is always timed, so a pair that is rare beside a busy
 * one still gets its latencies. Every wake-up is counted.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(ctxtop_waking, struct task_struct *p)
{
	struct note *n;
	u32 idx, wakee, tid, j;
	u64 id;

	/*
	 * Still on its run queue: woken before it had gone to sleep, so no
	 * switch-in will follow from this wake-up. Since Linux 6.12 a task
	 * that sleeps may stay queued a while (a delayed dequeue, sched_delayed):
	 * that one did sleep. (The kernel reads these right after this
	 * tracepoint, so the reads cost no cache miss.)
	 */
	if (p->on_rq && !(bpf_core_field_exists(p->se.sched_delayed) && p->se.sched_delayed))
		return 0;
	wakee = p->pid;
	idx = slot_of(wakee);
	n = bpf_map_lookup_elem(&notes, &idx);
	if (!n)
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (u32)id;
	j = (u32)bpf_jiffies64();
	if (n->owner != wakee) {
		/*
		 * Another wakee takes the slot. The counts left in it are the
		 * last owner's from this or the last jiffy; older ones belong
		 * to a thread long quiet, most likely gone, and are dropped
		 * rather than shown in an interval they were not in.
		 */
		if (j - n->flush_jif <= 1)
			flush(n);
		else
			clear_counts(n);
		n->owner = wakee;
		n->owner_pid = p->tgid;
		bpf_probe_read_kernel_str(n->owner_comm, sizeof(n->owner_comm), p->comm);
		n->cw_tid = NO_TID;
		n->last_waker_tid = NO_TID;
		n->jif = j;
		n->in_jif = 0;
		n->mask = 0;
	} else if (j != n->jif) {
		u32 per = n->in_jif / TIMED_PER_JIFFY;

		n->mask = per && j == n->jif + 1 ? (1u << log2_u64(per)) - 1 : 0;
		n->jif = j;
		n->in_jif = 0;
	}
	n->ts = 0;
	if ((n->in_jif & n->mask) == 0 || tid != n->last_waker_tid)
		n->ts = bpf_ktime_get_ns();
	n->in_jif++;
	if (tid != n->last_waker_tid) {
		bpf_get_current_comm(n->waker_comm, sizeof(n->waker_comm));
		n->last_waker_tid = tid;
	}
	n->waker_tid = tid;
	n->waker_pid = id >> 32;
	n->waker_cpu = bpf_get_smp_processor_id();
	n->tid = wakee;
	return 0;
}

#define NO_LATENCY LAT_BUCKETS

SEC("tp_btf/sched_switch")
int BPF_PROG(ctxtop_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 cpu = bpf_get_smp_processor_id();
	u32 idx, wakee, waker, b = NO_LATENCY;
	struct cpu_stats *st;
	struct note *n;

	st = bpf_map_lookup_elem(&cpu_stat_map, &cpu);
	if (st)
		st->switches++;

	wakee = next->pid;
	idx = slot_of(wakee);
	n = bpf_map_lookup_elem(&notes, &idx);
	if (!n || n->tid != wakee || !wakee)
		return 0; /* not the end of a sleep we saw begin to end */
	n->tid = 0;
	waker = n->waker_tid;
	if (n->ts) {
		b = log2_u64(bpf_ktime_get_ns() - n->ts);
		if (b >= LAT_BUCKETS)
			b = LAT_BUCKETS - 1;
	}
	if (waker != n->cw_tid || n->jif != n->flush_jif) {
		flush(n);
		if (waker != n->cw_tid) {
			__builtin_memcpy(n->cw_comm, n->waker_comm, sizeof(n->cw_comm));
			n->cw_tid = waker;
			n->cw_pid = n->waker_pid;
			/* The wakee may have renamed itself since. */
			bpf_probe_read_kernel_str(n->owner_comm, sizeof(n->owner_comm), next->comm);
		}
		n->flush_jif = n->jif;
	}
	n->cw_wakeups++;
	if (n->waker_cpu != cpu)
		n->cw_cross++;
	if (b < LAT_BUCKETS)
		n->cw_latency[b]++;
	/*
	 * A wakee woken fewer than TIMED_PER_JIFFY times in its last jiffy
	 * (its stride is 1) is counted in the map at once: a rare wake-up
	 * should show in its own interval, and costs nothing to speak of.
	 */
	if (!n->mask)
		flush(n);
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
