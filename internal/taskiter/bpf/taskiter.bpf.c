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
 * in bench.bpf.c writes the same records that way; the benchmark
 * BenchmarkWalkVsSeqIter keeps the comparison honest.
 *
 * The walk visits processes in creation order and each one's threads in
 * creation order: the same order pass after pass, newcomers at the end of
 * their list. Records hold what /proc formats from the same task_struct
 * fields: schedstat's three fields, status's switch counts, state and
 * Cpus_allowed, stat's start time and last CPU, and comm.
 *
 * Stepping from task to task is itself most of a walk over idle threads:
 * each task_struct is a cache miss, some 0.15 us, 15 ms at 100,000 threads
 * whatever the program reads of them. So on a host with that many, user
 * space attaches ctxtop_wakeup and ctxtop_wakeup_new, which mark a
 * process in a bitmap when one of its threads is woken, and the walk
 * steps over a process nobody woke, leaving its records as they are: see
 * ctxtop_walk for why that is exact.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#include "rec.h"

/* Set by user space before loading (mask_words too, in rec.h). */
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

/*
 * The walk's orders and report, one element that user space maps: full
 * it sets before a walk that is to visit every process (the first, and
 * any after the hooks were not attached all the while); skipped the walk
 * sets to how many threads it stepped over, walked to how many records
 * it holds for this walk, which the next one may keep. A map rather than
 * the run's context so that a pass allocates nothing to pass them.
 */
struct walk_ctl {
	u32 full;
	u32 walked;
	u32 skipped;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct walk_ctl);
} control SEC(".maps");

/*
 * One bit a process, by tgid: set by the hooks when one of its threads is
 * woken, taken by the walk when it visits the process. User space sizes
 * it to pid_max; a process whose bit lies past the end is visited always.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} dirty SEC(".maps");

/*
 * spans[i] is how many records the process whose leader's record is i
 * took when the walk last visited it at i: what a walk that steps over it
 * adds to its count. Sized like recs; only the walk reads it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} spans SEC(".maps");

/*
 * The hooks' runs, a counter a CPU, each in a cache line of its own so
 * that counting does not move lines between CPUs. User space reads them
 * (mapped) to weigh what the hooks cost the host against what they save
 * the walk; the counting's locked add is also the hooks' memory barrier
 * (see mark). User space sizes it to the possible CPUs.
 */
struct wake_count {
	u64 n;
	u64 pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct wake_count);
} wakeups SEC(".maps");

/*
 * Whether t may be about to run or be running: on a CPU, on a run queue,
 * or set running by a wake-up that has not queued it yet; and its state.
 * Read before anything else of t, and kept before the reads after it (the
 * compiler barrier; x86 keeps loads in order), so that counters read
 * after a "no" are final until t's next wake-up.
 */
static __always_inline bool active(struct task_struct *t, u32 *state)
{
	int on_cpu = 0, on_rq;

	if (bpf_core_field_exists(t->on_cpu))
		on_cpu = *(volatile int *)&t->on_cpu;
	on_rq = *(volatile int *)&t->on_rq;
	*state = state_of(t);
	asm volatile("" ::: "memory");
	return on_cpu || on_rq || *state == 0; /* TASK_RUNNING */
}

/*
 * How many records the process led by p, at slot n, still holds from the
 * last walk, or 0 when it must be visited: its leader's record is at n
 * (the same thread: its TID and start time), the walk that holds the
 * records reached past them, and the process has the number of threads it
 * had then.
 */
static __always_inline u32 kept(struct task_struct *p, u32 n, u32 walked)
{
	struct rec *r = bpf_map_lookup_elem(&recs, &n);
	u32 *span = bpf_map_lookup_elem(&spans, &n);
	struct signal_struct *sig;
	u32 s;

	if (!r || !span || n >= walked)
		return 0;
	if (r->tid != p->pid || r->start_ns != p->start_boottime)
		return 0;
	s = *span;
	sig = p->signal;
	if (s == 0 || s > walked - n || !sig || s != (u32)sig->nr_threads)
		return 0;
	return s;
}

/*
 * Returns how many threads it found; only as many as the array holds were
 * written, and user space runs it again with a larger one when it found more.
 *
 * It walks process by process (ALL_PROCS, whose step touches only the
 * leaders), then each process's threads (PROC_THREADS): the same order as
 * a walk of all threads. Unless told to visit everything (control.full)
 * it steps over a process that nobody woke since it was last visited:
 * its bit in dirty is clear, kept() finds its records where they were,
 * and its records stay as they are, unlisted in changed. That is exact:
 *
 *  - A thread's counters, state and CPU change only while it is on a CPU
 *    or a run queue. Off both and not TASK_RUNNING, it gets there only
 *    through try_to_wake_up or wake_up_new_task, which set __state to
 *    TASK_RUNNING and on_rq before sched_wakeup or sched_wakeup_new
 *    fires, and the hook (mark) then sets the process's bit.
 *  - The walk takes the bit with a locked read-modify-write and reads each
 *    thread's flags (active) after it; the hook sets on_rq and then makes a
 *    locked add before it reads the bit. Of two such sequences on x86 one
 *    sees the other's store (a store-buffering pattern with a full
 *    barrier on each side): either the walk reads the thread as active and
 *    carries the bit (sets it again, so the next walk visits the process
 *    too), or the hook sees the bit clear and sets it for the next walk.
 *    A thread running or queued at a visit is active then, and carried
 *    until a visit finds it at rest.
 *  - A thread is born or reaped only by a running thread of its process,
 *    or after waking it (a signal), so a process nobody woke, none of
 *    whose threads was active at its last visit, has the same threads.
 *    A process reaped by its parent shifts those after it, whose leaders'
 *    records then are not at their slots, and they are visited.
 *  - A visit that rewrote a record carries the bit too: the next walk
 *    reads what moved once more, whatever raced the read.
 *
 * A process is also visited when its bit lies past the bitmap's end (its
 * tgid above pid_max when user space sized the map), and then carries
 * nothing. The ordering argument needs x86's locked instructions and its
 * ordered loads; user space attaches the hooks only there.
 *
 * What the argument cannot cover is a run the hooks never see. On Linux
 * 6.18 a host's threads, kernel threads mostly (rcu_preempt among them),
 * were seen to be switched onto a CPU, about once in a few hundred times,
 * with no sched_waking, sched_wakeup or sched_switch program run for them
 * and no recursion miss counted; the cause was not found. User space therefore makes every 16th walk a full
 * one (scrubPasses in skip.go), which bounds how long such a run can stay
 * unread. The threads of ordinary processes, woken through futexes,
 * pipes, signals and timers, were exact in every test.
 */
SEC("syscall")
int ctxtop_walk(void *ctx)
{
	struct bpf_iter_task procs, threads;
	struct task_struct *p, *t, *leader;
	struct walk_ctl *ctl;
	struct rec *r;
	u64 *slot, *word, bit;
	u32 *span_at;
	u32 n = 0, d = 0, k, tgid, first, count, span, skipped = 0, walked, full, state;
	bool carry, lost = false, marked;

	k = 0;
	ctl = bpf_map_lookup_elem(&control, &k);
	if (!ctl)
		return 0;
	full = ctl->full;
	walked = ctl->walked;
	bpf_rcu_read_lock();
	bpf_iter_task_new(&procs, NULL, BPF_TASK_ITER_ALL_PROCS);
	while ((p = bpf_iter_task_next(&procs))) {
		/* The walk starts at init_task, the boot CPU's idle task (PID
		 * 0), which /proc does not list. */
		if (p->pid == 0)
			continue;
		tgid = p->tgid;
		if (filter_tgid && !bpf_map_lookup_elem(&targets, &tgid))
			continue;
		/*
		 * Take the bit. A plain read first: a clear bit, the common
		 * case, then costs no write. A set one missed by the read was
		 * being set by a wake-up that has not run the thread yet.
		 */
		k = tgid / 64;
		bit = 1ULL << (tgid % 64);
		word = bpf_map_lookup_elem(&dirty, &k);
		marked = !word;
		if (word && (*word & bit))
			marked = __sync_fetch_and_and(word, ~bit) & bit;
		if (!full && !marked) {
			span = kept(p, n, walked);
			if (span) {
				n += span;
				skipped += span;
				continue;
			}
		}
		first = n;
		count = 0;
		carry = false;
		/*
		 * The thread iterator wants a trusted task, which the process
		 * iterator's RCU pointer is not: a reference for the visit. A
		 * leader that can no longer be had is being freed, and all its
		 * threads with it; its slots are left to the next process,
		 * whose leader's record then does not match.
		 */
		leader = bpf_task_acquire(p);
		if (!leader)
			continue;
		bpf_iter_task_new(&threads, leader, BPF_TASK_ITER_PROC_THREADS);
		while ((t = bpf_iter_task_next(&threads))) {
			if (active(t, &state))
				carry = true;
			r = bpf_map_lookup_elem(&recs, &n);
			if (!r)
				lost = true;
			/*
			 * The record left in this slot by the last walk is
			 * still exact when it is this thread's (its TID and
			 * start time), its schedstat and switch counts did not
			 * move and its state is the same: the thread has not
			 * run, so its CPU has not changed either, and the
			 * /proc path does not re-read its name and affinity
			 * then. Reading four lines of the task_struct instead
			 * of ten is some of a walk over idle threads. The
			 * state and the switch counts (on the start time's
			 * line) are compared too because they move apart from
			 * schedstat: a wake-up sets the state before the
			 * thread runs, and a switch away counts before the
			 * run time does when the clock has not moved. A
			 * thread born or gone shifts the slots after it,
			 * which are then written afresh.
			 */
			if (r && !(r->tid == t->pid && r->start_ns == t->start_boottime &&
				   r->state == state &&
				   r->nvcsw == t->nvcsw && r->nivcsw == t->nivcsw &&
				   r->pcount == t->sched_info.pcount &&
				   r->run_ns == t->se.sum_exec_runtime &&
				   r->wait_ns == t->sched_info.run_delay)) {
				fill(r, t);
				carry = true;
				k = changed_first + d;
				slot = bpf_map_lookup_elem(&changed, &k);
				if (slot) {
					*slot = n;
					d++;
				}
			}
			n++;
			count++;
		}
		bpf_iter_task_destroy(&threads);
		bpf_task_release(leader);
		span_at = bpf_map_lookup_elem(&spans, &first);
		if (span_at)
			*span_at = count;
		if (carry && word)
			__sync_fetch_and_or(word, bit);
	}
	bpf_iter_task_destroy(&procs);
	bpf_rcu_read_unlock();
	k = 0;
	slot = bpf_map_lookup_elem(&changed, &k);
	if (slot)
		*slot = d;
	/* Records past the array were not written: keep none next time. */
	ctl->walked = lost ? 0 : n;
	ctl->skipped = skipped;
	return n;
}

/*
 * Marks the process of a thread being woken (see ctxtop_walk). The
 * counting's locked add comes first: on x86 it is a full barrier, so the
 * read of the bit after it cannot pass the wake-up's store of on_rq
 * before it. Without the counter (a CPU past the map) the set is locked
 * unconditionally, which is a barrier too.
 */
static __always_inline void mark(struct task_struct *p)
{
	u32 k = bpf_get_smp_processor_id();
	struct wake_count *c = bpf_map_lookup_elem(&wakeups, &k);
	u32 tgid = p->tgid;
	u64 *word, bit = 1ULL << (tgid % 64);

	if (c)
		__sync_fetch_and_add(&c->n, 1);
	k = tgid / 64;
	word = bpf_map_lookup_elem(&dirty, &k);
	if (word && (!c || !(*word & bit)))
		__sync_fetch_and_or(word, bit);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(ctxtop_wakeup, struct task_struct *p)
{
	mark(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(ctxtop_wakeup_new, struct task_struct *p)
{
	mark(p);
	return 0;
}
