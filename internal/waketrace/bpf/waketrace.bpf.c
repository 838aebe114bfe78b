// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Who wakes whom, aggregated in the kernel.
 *
 * sched_waking runs in the waker's context (current is the waker, on the
 * waker's CPU) and counts one wake-up for the (waker, wakee) pair in the
 * wakee's slot of a fixed table, chosen by a hash of the wakee's thread ID.
 * It also leaves a note there: the waker's CPU, how often the wakee has
 * arrived on a CPU so far (the scheduler's own sched_info.pcount), and for
 * some wake-ups the time. The wakee's next waking reads the count again:
 * if the wakee ran in between, the CPU it ran on (task_cpu) says whether
 * the wake-up before crossed CPUs. So the count and the cross-CPU share
 * need no hook on the switch itself; the latest wake-up of each wakee is
 * resolved at its next one.
 *
 * The wake-to-run latency does: sched_switch, when it switches in a wakee
 * whose note has a time, adds now - then to the pair's log2 histogram.
 * On a VM with the usual speculation mitigations just calling a BPF
 * program from a tracepoint costs some 70 ns, which a pinned ping-pong (two
 * switches and one wake-up a round trip) would pay at every switch, so
 * user space attaches the switch program only part of each interval (all
 * of it while the per-CPU view shows its per-CPU switch counts), and the
 * latencies are those of the wake-ups in that part.
 *
 * A busy wakee's counts gather in its slot while its waker stays the same
 * and reach the pair map about once a jiffy, or every FLUSH_EVERY
 * wake-ups if sooner; user space drains the pair map once per refresh with
 * a batch lookup-and-delete; nothing is sent per event. A slot, not task storage, because a slot is a plain array element,
 * which the verifier inlines. Two wakees sharing a slot take it from each
 * other, and the note of the one that lost it is not resolved: with n
 * wakees woken at about the same time, about n in NOTE_SLOTS of their
 * wake-ups go untimed (an estimate from the table's size); none goes
 * uncounted.
 *
 * A wake-up in an interrupt (a timer expiring, a packet or a disk request
 * completing) runs in the context of whichever task the interrupt came
 * upon, which has nothing to do with it: such a wake-up is counted for a
 * pseudo-waker (hard interrupt, softirq or timer, see waker_of), never for
 * current.
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
#define NOTE_SLOTS_LOG2 14
#define NOTE_SLOTS (1 << NOTE_SLOTS_LOG2)
/*
 * A wakee woken at least this often in its last jiffy is busy: its counts
 * wait in its slot for the next jiffy; anyone else's go to the map at once.
 */
#define BUSY_PER_JIFFY 8
/* About this many of a wakee's wake-ups a jiffy are timed. */
#define TIMED_PER_JIFFY 8
/*
 * A busy wakee's counts go to the map every FLUSH_EVERY wake-ups too, not
 * only once a jiffy: a read finds at most that many of them still in its
 * slot (they show in the next interval), where a jiffy of a pinned
 * ping-pong is some 3,000 wake-ups, which moved an interval's rate by a
 * few percent against the threads' own counters, and which a thread that
 * exits takes with it. A map lookup every 64 wake-ups costs each well
 * under a nanosecond.
 */
#define FLUSH_EVERY 64

/*
 * A wakee's slot: the note of its latest wake-up, not yet resolved, and its
 * counts for the pair (cw_tid -> owner) not yet added to pair_map. They
 * gather here while its waker stays the same, and are added to the map
 * when another waker wakes it, at its first wake-up in a new jiffy, every
 * FLUSH_EVERY wake-ups, at every wake-up when it is not busy, and when
 * another wakee takes the slot, so the map is looked up about once a
 * jiffy or FLUSH_EVERY wake-ups per busy wakee instead of at every
 * wake-up. Four cache lines; a wake-up touches the first two
 * and one of the latency histogram's.
 */
struct note {
	u32 owner;	/* the wakee whose slot this is */
	u32 owner_pid;
	u32 pending;	/* the note below waits for the next waking */
	u32 waker_cpu;	/* the CPU the noted wake-up came from */
	u64 pcount;	/* the wakee's sched_info.pcount then */
	u64 ts;		/* when it was woken, if this wake-up is timed; else 0 */
	u32 jif;	/* low bits of the jiffy in_jif counts */
	u32 in_jif;
	u32 busy;
	u32 mask;	/* timing stride - 1 */
	u32 cw_tid;	/* the waker of the counts below, NO_TID for none */
	u32 cw_pid;
	char owner_comm[TASK_COMM_LEN];
	char cw_comm[TASK_COMM_LEN];
	u64 cw_wakeups;
	u64 cw_resolved;	/* of those noted, how many were resolved */
	u64 cw_cross;		/* ... and found to run on another CPU */
	u32 cw_latency[LAT_BUCKETS];
	u64 _pad1[2];
};

struct pair_key {
	u32 waker_tid;
	u32 wakee_tid;
};

struct pair {
	u64 wakeups;
	/*
	 * Wake-ups whose outcome the wakee's next waking saw: the cross-CPU
	 * share is cross_cpu / resolved. They may be wake-ups of the
	 * previous interval.
	 */
	u64 resolved;
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

/*
 * Wakers that are no thread, as the pair key's waker; above any thread ID
 * (PID_MAX_LIMIT is 2^22). Keep in step with Go (tracer.go).
 */
#define WAKER_IRQ 0xfffffff1u		/* a hard interrupt, not a timer's */
#define WAKER_SOFTIRQ 0xfffffff2u	/* a softirq, not a timer's: network, block, tasklets */
#define WAKER_TIMER 0xfffffff3u		/* an hrtimer or timer_list callback */
/*
 * The idle task is thread 0 on every CPU: keyed by its CPU, or swapper/1's
 * wake-ups would be counted and named as swapper/0's.
 */
#define WAKER_IDLE 0x80000000u		/* | CPU */

/* include/linux/preempt.h: the preempt count's interrupt bits. */
#define SOFTIRQ_OFFSET (1u << 8)	/* serving a softirq (not just bh disabled) */
#define HARDIRQ_MASK (0xfu << 16)
#define NMI_MASK (0xfu << 20)
#define HRTIMER_HARD_BASES 4		/* clock_base[0..3]; [4..7] are the soft ones */
#define MAX_TIMER_BASES 4

/*
 * Where this CPU's preempt count, hrtimer bases and timer wheel bases lie,
 * in bytes from its run queue. All are per-CPU variables, laid out alike
 * for every CPU, so their distances are those of their offsets in the
 * kernel's BTF (.data..percpu), which user space sets here before loading;
 * 0 where this kernel has no such variable (interrupts are then not told
 * apart, and the waker is current). Not __ksym variables: the kernel finds
 * those in kallsyms, which lists no data without CONFIG_KALLSYMS_ALL.
 */
volatile const s64 preempt_count_from_rq = 0;
volatile const s64 hrtimer_bases_from_rq = 0;
volatile const s64 timer_bases_from_rq = 0;
volatile const u32 timer_bases_n = 0;

/* running_at tells whether the pointer at addr is set. */
static __always_inline bool running_at(u64 addr)
{
	void *p = 0;

	return !bpf_probe_read_kernel(&p, sizeof(p), (void *)addr) && p;
}

/*
 * in_timer tells whether a timer callback is running on this CPU: an
 * hrtimer of the hard bases in a hard interrupt; in a softirq, one of the
 * soft bases or of the timer wheel (timer_list). Only a wake-up in an
 * interrupt comes here, so its reads cost a task's wake-up nothing.
 */
static __always_inline bool in_timer(u64 rq, bool hard)
{
	u64 at = rq + hrtimer_bases_from_rq + bpf_core_field_offset(struct hrtimer_cpu_base, clock_base) +
		 bpf_core_field_offset(struct hrtimer_clock_base, running);
	u64 size = bpf_core_type_size(struct hrtimer_clock_base);
	int i;

	if (hrtimer_bases_from_rq) {
		if (!hard)
			at += HRTIMER_HARD_BASES * size;
		for (i = 0; i < HRTIMER_HARD_BASES; i++)
			if (running_at(at + i * size))
				return true;
	}
	if (hard || !timer_bases_from_rq)
		return false;
	at = rq + timer_bases_from_rq + bpf_core_field_offset(struct timer_base, running_timer);
	size = bpf_core_type_size(struct timer_base);
	for (i = 0; i < MAX_TIMER_BASES && i < timer_bases_n; i++)
		if (running_at(at + i * size))
			return true;
	return false;
}

/*
 * waker_of is the waker's key in the pair map: current's thread ID, but a
 * pseudo-waker when the wake-up runs in an interrupt, in which current is
 * only the task the interrupt came upon, and the idle task keyed by CPU.
 * The preempt count says which: the hard interrupt bits, or the bit of a
 * softirq being served (run at an interrupt's end, by ksoftirqd or when a
 * task enables bottom halves again; a task that merely disabled them
 * still wakes as itself). x86 keeps it per CPU, found from this CPU's run
 * queue, which current's fair-class entity points to (every task's, the
 * idle task's too, under CONFIG_FAIR_GROUP_SCHED).
 */
static __always_inline u32 waker_of(u32 tid, u32 cpu)
{
	struct task_struct *cur;
	struct cfs_rq *cfs;
	u32 pc = 0;
	u64 rq;

	if (preempt_count_from_rq && bpf_core_field_exists(struct sched_entity, cfs_rq)) {
		cur = bpf_get_current_task_btf();
		cfs = cur->se.cfs_rq;
		rq = cfs ? (u64)cfs->rq : 0;
		if (rq && !bpf_probe_read_kernel(&pc, sizeof(pc), (void *)(rq + preempt_count_from_rq))) {
			if (pc & (HARDIRQ_MASK | NMI_MASK))
				return in_timer(rq, true) ? WAKER_TIMER : WAKER_IRQ;
			if (pc & SOFTIRQ_OFFSET)
				return in_timer(rq, false) ? WAKER_TIMER : WAKER_SOFTIRQ;
		}
	}
	if (tid == 0)
		return WAKER_IDLE | cpu;
	return tid;
}

static __always_inline u32 slot_of(u32 tid)
{
	return (tid * 2654435761u) >> (32 - NOTE_SLOTS_LOG2);
}

static __always_inline void clear_counts(struct note *n)
{
	n->cw_wakeups = 0;
	n->cw_resolved = 0;
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

	if (!n->cw_wakeups && !n->cw_resolved)
		return;
	k.waker_tid = n->cw_tid;
	k.wakee_tid = n->owner;
	/*
	 * Only the wakee's waking writes its slot's pairs; two wakers of one
	 * wakee at once would need it woken twice at once, which the
	 * kernel's lock on the wakee prevents.
	 */
	v = bpf_map_lookup_elem(&pair_map, &k);
	if (v) {
		v->wakeups += n->cw_wakeups;
		v->resolved += n->cw_resolved;
		v->cross_cpu += n->cw_cross;
		for (i = 0; i < LAT_BUCKETS; i++)
			v->latency[i] += n->cw_latency[i];
	} else {
		struct pair nv = {};

		nv.wakeups = n->cw_wakeups;
		nv.resolved = n->cw_resolved;
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

/* The CPU p last ran on (task_cpu). */
static __always_inline u32 cpu_of(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return p->thread_info.cpu;
	return p->cpu;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ctxtop_waking, struct task_struct *p)
{
	u64 id, pcount = 0;
	u32 idx, wakee, tid, cpu, j;
	bool new_jiffy = false;
	struct note *n;

	/*
	 * Still on its run queue: woken before it had gone to sleep, so it
	 * never stopped running for this wake-up. Since Linux 6.12 a task
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
	cpu = bpf_get_smp_processor_id();
	tid = waker_of((u32)id, cpu);
	j = (u32)bpf_jiffies64();
	if (n->owner != wakee) {
		/*
		 * Another wakee takes the slot. The counts left in it are the
		 * last owner's from this or the last jiffy; older ones belong
		 * to a thread long quiet, most likely gone, and are dropped
		 * rather than shown in an interval they were not in.
		 */
		if (j - n->jif <= 1)
			flush(n);
		else
			clear_counts(n);
		n->owner = wakee;
		n->owner_pid = p->tgid;
		n->pending = 0;
		n->cw_tid = NO_TID;
		n->jif = j;
		n->in_jif = 0;
		n->busy = 0;
		n->mask = 0;
	} else if (j != n->jif) {
		u32 per = n->in_jif / TIMED_PER_JIFFY;

		n->busy = j == n->jif + 1 && n->in_jif >= BUSY_PER_JIFFY;
		n->mask = per && j == n->jif + 1 ? (1u << log2_u64(per)) - 1 : 0;
		n->jif = j;
		n->in_jif = 0;
		new_jiffy = true;
	}
	if (bpf_core_field_exists(p->sched_info))
		pcount = p->sched_info.pcount;
	/*
	 * Resolve the wake-up before, whose counts are the cached pair's: it
	 * was counted at the last waking, which made its waker the cached one.
	 */
	if (n->pending && pcount != n->pcount) {
		n->cw_resolved++;
		if (cpu_of(p) != n->waker_cpu)
			n->cw_cross++;
	}
	/*
	 * Reading the clock costs as much as the rest of this program, so a
	 * wakee woken more than TIMED_PER_JIFFY times in a jiffy has only
	 * every 2^k-th wake-up timed, the stride chosen from its previous
	 * jiffy; a wake-up by another waker than the last is always timed, so
	 * a pair that is rare beside a busy one still gets its latencies.
	 */
	n->ts = 0;
	if ((n->in_jif & n->mask) == 0 || tid != n->cw_tid)
		n->ts = bpf_ktime_get_ns();
	if (tid != n->cw_tid || new_jiffy) {
		flush(n);
		if (tid != n->cw_tid) {
			n->cw_tid = tid;
			/* User space names the pseudo-wakers; current is not one. */
			if (tid >= WAKER_IRQ) {
				n->cw_pid = tid;
				n->cw_comm[0] = 0;
			} else {
				n->cw_pid = id >> 32;
				bpf_get_current_comm(n->cw_comm, sizeof(n->cw_comm));
			}
			/* The wakee may have renamed itself since. */
			bpf_probe_read_kernel_str(n->owner_comm, sizeof(n->owner_comm), p->comm);
		}
	}
	n->cw_wakeups++;
	n->in_jif++;
	n->pending = 1;
	n->waker_cpu = cpu;
	n->pcount = pcount;
	/*
	 * A wakee that is not busy has its counts in the map at once: a rare
	 * wake-up should show in its own interval.
	 */
	if (!n->busy || n->cw_wakeups >= FLUSH_EVERY)
		flush(n);
	return 0;
}

/*
 * The switch-in of a timed wake-up's wakee ends its wake-to-run latency,
 * which goes into the wakee's cached counts: the pair of the wake-up, as
 * its waking made that one the cached pair. And the per-CPU switch count.
 * sched_switch runs at every switch, so user space attaches this only part
 * of the time (and all of it while the per-CPU view shows the counts).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(ctxtop_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 cpu = bpf_get_smp_processor_id();
	u32 idx, wakee, b;
	struct cpu_stats *st;
	struct note *n;

	st = bpf_map_lookup_elem(&cpu_stat_map, &cpu);
	if (st)
		st->switches++;
	wakee = next->pid;
	idx = slot_of(wakee);
	n = bpf_map_lookup_elem(&notes, &idx);
	if (!n || n->owner != wakee || !n->ts || !wakee)
		return 0;
	/*
	 * Only the wakee's first arrival since the waking ends the wake-up
	 * (the scheduler counts this one only after this tracepoint). A
	 * wakee that first ran while this program was detached and is now
	 * switched in again after a preemption would read a latency as long
	 * as it has been running.
	 */
	if (bpf_core_field_exists(next->sched_info) && next->sched_info.pcount != n->pcount) {
		n->ts = 0;
		return 0;
	}
	b = log2_u64(bpf_ktime_get_ns() - n->ts);
	n->ts = 0;
	if (b >= LAT_BUCKETS)
		b = LAT_BUCKETS - 1;
	n->cw_latency[b]++;
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
