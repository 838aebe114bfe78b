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

/*
 * The records this walk moved rather than rewrote: runs of cnt records
 * taken from the last walk's slots src on and put at slots dst on, in
 * increasing order, control.moves of them. When a process or thread ends,
 * the records of every process after it in the walk shift down; when one
 * is born, up. A process whose records are otherwise where the last walk
 * left them, nobody having woken it, has them copied to their new slots
 * (move, shift) instead of being visited whole and every record of it
 * rewritten and read again. The records moved stand for the same
 * threads, unmoved since: user space takes its memory of them along and
 * reads none. The list is bounded; past its end the walk visits whole as
 * before.
 */
#define MAX_MOVES 1024

struct move {
	u32 dst, src, cnt, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MAX_MOVES);
	__type(key, u32);
	__type(value, struct move);
} moves SEC(".maps");

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
	u32 phase; /* which slots this walk looks at anyway: see scrub */
	u32 moves; /* how many entries of moves the walk wrote */
	u32 shifted; /* how many records the walk shifted up (shift) */
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
 * One bit a thread, by TID, sized like dirty: set by the hooks with the
 * process's, so that a walk visiting a process whose threads are where it
 * left them looks only at the threads that were woken (see look).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} dirty_tids SEC(".maps");

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

struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;

/*
 * Every SCRUB-th slot is looked at in a walk whatever the bits say, a
 * different residue each walk (control.phase, which user space turns), so
 * that each thread's record is checked once in SCRUB walks: see
 * ctxtop_walk for the runs the hooks were seen to miss. Keep in step with
 * scrubPasses in skip.go.
 */
#define SCRUB 32

/*
 * How many processes ended since the last walk a walk passes over in a
 * row, looking for where the next one's records were; past that it
 * visits whole what follows.
 */
#define MAX_HOPS 16

/*
 * Takes the bit of id in map m: true when it was set. A plain read first:
 * a clear bit, the common case, then costs no write. A map too short for
 * id says set, always.
 */
static __always_inline bool take(void *m, u32 id)
{
	u32 k = id / 64;
	u64 bit = 1ULL << (id % 64), *word = bpf_map_lookup_elem(m, &k);

	if (!word)
		return true;
	if (!(*word & bit))
		return false;
	return __sync_fetch_and_and(word, ~bit) & bit;
}

/* Sets the bit of id in map m, unless it is set. */
static __always_inline void set(void *m, u32 id)
{
	u32 k = id / 64;
	u64 bit = 1ULL << (id % 64), *word = bpf_map_lookup_elem(m, &k);

	if (word && !(*word & bit))
		__sync_fetch_and_or(word, bit);
}

/*
 * Whether the record r no longer says what t does now (state read by
 * active): the record left in a slot by the last walk is still exact when
 * it is this thread's (its TID and start time), its schedstat and switch
 * counts did not move and its state is the same: the thread has not run,
 * so its CPU has not changed either, and the /proc path does not re-read
 * its name and affinity then. Reading four lines of the task_struct
 * instead of ten is some of a walk over idle threads. The state and the
 * switch counts (on the start time's line) are compared too because they
 * move apart from schedstat: a wake-up sets the state before the thread
 * runs, and a switch away counts before the run time does when the clock
 * has not moved. So are its CPU and migrations: a wake-up may move a
 * thread before it runs.
 */
static __always_inline bool stale(struct rec *r, struct task_struct *t, u32 state)
{
	return !(r->tid == t->pid && r->start_ns == t->start_boottime &&
		 r->state == state && r->cpu == cpu_of(t) &&
		 r->nr_migrations == t->se.nr_migrations &&
		 r->nvcsw == t->nvcsw && r->nivcsw == t->nivcsw &&
		 r->pcount == t->sched_info.pcount &&
		 r->run_ns == t->se.sum_exec_runtime &&
		 r->wait_ns == t->sched_info.run_delay);
}

/* Lists slot i in the changed list, the d-th entry. */
static __always_inline void list_changed(u32 i, u32 *d)
{
	u32 k = changed_first + *d;
	u64 *slot = bpf_map_lookup_elem(&changed, &k);

	if (slot) {
		*slot = i;
		(*d)++;
	}
}

/*
 * Looks at the thread of slot i, in the process tgid whose records are
 * kept: finds it by its TID, rewrites its record when stale, and marks it
 * (and its process) again when it is active or its record moved, so that
 * the next walk looks at it too. Returns false when the slot's thread is
 * no longer that process's: the process's records are then not kept.
 */
static __always_inline bool look(u32 i, u32 tgid, u32 *d)
{
	struct rec *r = bpf_map_lookup_elem(&recs, &i);
	struct task_struct *t;
	bool ok = true, again;
	u32 state;

	if (!r)
		return false;
	t = bpf_task_from_pid(r->tid);
	if (!t)
		return false;
	if (t->tgid != tgid || t->start_boottime != r->start_ns) {
		/*
		 * Another thread holds the TID now, in this process or
		 * another: the bit the caller took for the slot was that
		 * thread's, which a wake-up or a visit may have set. Given
		 * back, so that its own process's next look reads it.
		 */
		set(&dirty_tids, r->tid);
		ok = false;
	} else {
		again = active(t, &state);
		if (stale(r, t, state)) {
			fill(r, t);
			list_changed(i, d);
			again = true;
		}
		if (again) {
			set(&dirty_tids, r->tid);
			set(&dirty, tgid);
		}
	}
	bpf_task_release(t);
	return ok;
}

/*
 * How many records the process led by p had from slot m on in the last
 * walk, or 0 when its leader's record is not at m (the same thread: its
 * TID and start time) or the walk that holds the records did not reach
 * past them.
 */
static __always_inline u32 held(struct task_struct *p, u32 m, u32 walked)
{
	struct rec *r = bpf_map_lookup_elem(&recs, &m);
	u32 *span = bpf_map_lookup_elem(&spans, &m);
	u32 s;

	if (!r || !span || m >= walked)
		return 0;
	if (r->tid != p->pid || r->start_ns != p->start_boottime)
		return 0;
	s = *span;
	if (s == 0 || s > walked - m)
		return 0;
	return s;
}

/* Whether the process led by p has s threads, as many as it had records. */
static __always_inline bool same_count(struct task_struct *p, u32 s)
{
	struct signal_struct *sig = p->signal;

	return sig && s == (u32)sig->nr_threads;
}

/*
 * The walk's running state, in a map rather than on the stack: the
 * verifier follows the contents of stack slots and registers exactly, so
 * with them there every combination of counters and flags at a loop's
 * head was a state of its own to check (some 300,000 instructions and a
 * second and more to load); a map value's contents it does not follow.
 */
struct walk_state {
	u32 n, d, d0, looked, first, count, span, walked, full, phase;
	u32 from, step, cnt;
	/* old is the slot at which the next process's records began in the
	 * last walk, while track says that is known and no record from there
	 * on has been overwritten yet (n <= old); at, held and hops are the
	 * process's slot then, its span and the search for it; moves counts
	 * the moves listed. */
	u32 old, at, held, moves, undo_cnt;
	/* off is how far up this walk's shifts have moved the last walk's
	 * records from old on: a record at slot i came from slot i - off.
	 * Slots from shifted on hold records that are not what user space
	 * knows at that slot: a visit there lists every record it writes.
	 * copied counts the records shifted. */
	u32 off, shifted, copied;
	u8 lost, relist, carry, marked, ok, track, moved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct walk_state);
} scratch SEC(".maps");

/*
 * Copies the s records of the last walk from slot src on to slot dst on
 * (dst <= src, so a record is read before anything overwrites it) with
 * their span, unless they are there already (a shift put them there),
 * and lists the move from slot from on, where the last walk had them,
 * unless that is dst, remembering how to take the listing back (unmove). 0 when the list is
 * full or a slot is out of the array: nothing was moved then. A global function, which the verifier checks
 * once on its own: inlined into the walk's loops, its branches multiplied
 * the walk's states to some 900,000 instructions and seconds of loading,
 * against some 14,000 and 50 ms so. It finds the walk's state itself, as
 * a global function takes scalars only.
 */
__noinline int ctxtop_move(u32 dst, u32 src, u32 s, u32 from)
{
	u32 words = mask_words, k = 0, i;
	struct walk_state *w = bpf_map_lookup_elem(&scratch, &k);
	struct bpf_iter_num num;
	struct move *mv = NULL;
	bool extend = false, list = dst != from;
	u32 *span_at;
	int *jp;

	if (!w)
		return 0;
	k = w->moves;
	if (words > MAX_MASK_WORDS)
		words = MAX_MASK_WORDS;
	if (list && k > 0) {
		i = k - 1;
		mv = bpf_map_lookup_elem(&moves, &i);
		/* Right after the last run, by the same shift: extend it. */
		extend = mv && mv->dst + mv->cnt == dst && mv->src + mv->cnt == from;
	}
	if (list && !extend) {
		if (k >= MAX_MOVES)
			return 0;
		mv = bpf_map_lookup_elem(&moves, &k);
	}
	i = dst + s - 1;
	span_at = bpf_map_lookup_elem(&spans, &dst);
	if ((list && !mv) || !span_at || !bpf_map_lookup_elem(&recs, &i))
		return 0;
	bpf_iter_num_new(&num, 0, dst == src ? 0 : s);
	while ((jp = bpf_iter_num_next(&num))) {
		u32 at = src + (u32)*jp, to = dst + (u32)*jp;
		struct rec *a = bpf_map_lookup_elem(&recs, &at);
		struct rec *b = bpf_map_lookup_elem(&recs, &to);

		if (!a || !b)
			break;
		__builtin_memcpy(b, a, __builtin_offsetof(struct rec, mask));
		if (words == 1)
			b->mask[0] = a->mask[0];
		else
			bpf_probe_read_kernel(&b->mask, words * sizeof(u64), &a->mask);
	}
	bpf_iter_num_destroy(&num);
	*span_at = s;
	/* Back where the last walk had them, after a shift: nothing to list. */
	w->moved = list;
	if (!list || !mv)
		return 1;
	if (extend) {
		w->undo_cnt = mv->cnt;
		mv->cnt += s;
	} else {
		w->undo_cnt = 0;
		mv->dst = dst;
		mv->src = from;
		mv->cnt = s;
		w->moves++;
	}
	return 1;
}

/*
 * Makes room for k more records at slot from: copies the last walk's
 * records from slot from up to end, with their spans, k slots up, the
 * last first so that a record is read before anything overwrites it.
 * The records before from stay; those after it are then found k slots
 * further on (walk_state.off). 0 when the array is too short: nothing
 * was copied then. A global function for the reason ctxtop_move is.
 *
 * A thread born in a process ahead of others in the walk needs its
 * slot: without the room, the process's visit would overwrite the
 * next one's first record and every process after it would be visited
 * whole, twice (the second walk looks at every thread the first
 * rewrote), some 20,000 threads at 10,000 against a few hundred. The
 * copy is one pass over memory, a record at a time, far cheaper than a
 * visit, which reads each thread's task_struct.
 */
__noinline int ctxtop_shift(u32 from, u32 end, u32 k)
{
	u32 words = mask_words, top = end + k - 1;
	struct bpf_iter_num num;
	int *jp;

	if (words > MAX_MASK_WORDS)
		words = MAX_MASK_WORDS;
	if (k == 0 || end <= from || top < end || !bpf_map_lookup_elem(&recs, &top))
		return 0;
	bpf_iter_num_new(&num, 0, end - from);
	while ((jp = bpf_iter_num_next(&num))) {
		u32 at = end - 1 - (u32)*jp, to = at + k;
		struct rec *a = bpf_map_lookup_elem(&recs, &at);
		struct rec *b = bpf_map_lookup_elem(&recs, &to);
		u32 *sa = bpf_map_lookup_elem(&spans, &at);
		u32 *sb = bpf_map_lookup_elem(&spans, &to);

		if (!a || !b || !sa || !sb)
			break;
		__builtin_memcpy(b, a, __builtin_offsetof(struct rec, mask));
		if (words == 1)
			b->mask[0] = a->mask[0];
		else
			bpf_probe_read_kernel(&b->mask, words * sizeof(u64), &a->mask);
		*sb = *sa;
	}
	bpf_iter_num_destroy(&num);
	return 1;
}

/*
 * Takes back the listing of the last move, whose records are to be
 * written afresh: the walk visits the process whole after all.
 */
static __always_inline void unmove(struct walk_state *w)
{
	u32 k = w->moves - 1;
	struct move *mv;

	if (!w->moved || w->moves == 0)
		return;
	w->moved = false;
	if (w->undo_cnt == 0) {
		w->moves--;
		return;
	}
	mv = bpf_map_lookup_elem(&moves, &k);
	if (mv)
		mv->cnt = w->undo_cnt;
}

/*
 * Returns how many threads it found; only as many as the array holds were
 * written, and user space runs it again with a larger one when it found more.
 *
 * It walks process by process (ALL_PROCS, whose step touches only the
 * leaders), then each process's threads (PROC_THREADS): the same order as
 * a walk of all threads. Unless told to visit everything (control.full),
 * a process whose records are where the last walk left them (kept(): its
 * leader's record at its slot, as many threads as then) is not walked:
 * its threads are looked up by TID (look), and only those whose bit in
 * dirty_tids is set, when its own bit in dirty is, and every SCRUB-th
 * slot; the rest keep their records, unlisted in changed. A process
 * nobody woke costs its leader and a few slots. That is exact:
 *
 *  - A thread's counters, state and CPU change only while it is on a CPU
 *    or a run queue. Off both and not TASK_RUNNING, it gets there only
 *    through try_to_wake_up or wake_up_new_task, which set __state to
 *    TASK_RUNNING and on_rq before sched_wakeup or sched_wakeup_new
 *    fires, and the hook (mark) then sets the thread's bit and then the
 *    process's.
 *  - The walk takes a bit with a locked read-modify-write and reads the
 *    thread's flags (active) after it; the hook sets on_rq and then makes
 *    a locked add before it reads the bits. Of two such sequences on x86
 *    one sees the other's store (a store-buffering pattern with a full
 *    barrier on each side): either the walk reads the thread as active
 *    and marks it again (so the next walk looks at it too), or the hook
 *    sees the bits clear and sets them for the next walk. A walk that
 *    took the process's bit finds the thread's, set before it. A thread
 *    running or queued at a look is active then, and marked again until
 *    a look finds it at rest.
 *  - A thread is born or reaped only by a running thread of its process,
 *    or after waking it (a signal), so a process none of whose threads
 *    was woken or active since its last visit has the same threads; and
 *    a look that finds a slot's thread gone or replaced makes the next
 *    walk visit the process whole. A process reaped by its parent, or a
 *    thread that ends, shifts those after it down: their leaders' records
 *    are then not at their slots but further on, where the walk finds them
 *    by following the last walk's spans past the processes that ended
 *    (their leaders are not in the list any more, whose order is
 *    creation's and never changes). A thread born in a process shifts
 *    those after it up: the walk visits that process whole, having first
 *    copied the records after it up to make room (shift), and then finds
 *    the next ones where the copy put them. A process found so, with the threads
 *    it had, has its records copied to its new slots (move) and is then
 *    treated as one whose records are where they were: a record says
 *    what it did whatever slot holds it, and the copies are read before
 *    this walk writes their old slots, since until then it writes only
 *    below them (n <= old; past that, track is dropped and what follows
 *    is visited whole, as when threads are born ahead of them).
 *  - A look or visit that rewrote a record marks the thread again too:
 *    the next walk reads what moved once more, whatever raced the read.
 *
 * A thread or process whose bit lies past its bitmap's end (an ID above
 * pid_max when user space sized the maps) counts as marked always. The
 * ordering argument needs x86's locked instructions and its ordered
 * loads; user space attaches the hooks only there.
 *
 * What the argument cannot cover is a run the hooks never see. On Linux
 * 6.18 a host's threads, kernel threads mostly (rcu_preempt among them),
 * were seen to be switched onto a CPU, about once in a few hundred times,
 * with no sched_waking, sched_wakeup or sched_switch program run for them
 * and no recursion miss counted; the cause was not found. So each walk
 * also looks at every SCRUB-th slot, a different residue each walk, which
 * bounds how long such a run can stay unread to SCRUB walks, at a
 * SCRUB-th of a full walk's lookups each time rather than a full walk
 * every SCRUB-th time. The threads of ordinary processes woken through
 * futexes and pipes were exact in every test; threads that timers wake
 * (the test's load drivers, on nanosleep) were seen to miss a wake-up
 * in 1 of 229 runs of TestSkippingWalkIsExact's churn case quiet and 4 of
 * 397 beside two busy loops, which the scrub or their next wake-up then
 * reads.
 */
SEC("syscall")
int ctxtop_walk(void *ctx)
{
	struct bpf_iter_task procs, threads;
	struct bpf_iter_num num;
	struct task_struct *p, *t, *leader;
	struct walk_ctl *ctl;
	struct walk_state *w;
	struct rec *r;
	u64 *slot;
	u32 *span_at;
	u32 k = 0, tgid, state;

	ctl = bpf_map_lookup_elem(&control, &k);
	w = bpf_map_lookup_elem(&scratch, &k);
	if (!ctl || !w)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	w->full = ctl->full;
	w->walked = ctl->walked;
	w->phase = ctl->phase % SCRUB;
	w->track = !w->full;
	w->shifted = (u32)-1;
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
		w->marked = take(&dirty, tgid);
		w->span = 0;
		w->held = 0;
		w->moved = false;
		if (w->track) {
			/*
			 * Where its records were: at old, or past processes
			 * that have ended since, whose records lie before its
			 * own in the same order.
			 */
			int *hp;

			w->at = w->old;
			bpf_iter_num_new(&num, 0, MAX_HOPS);
			while ((hp = bpf_iter_num_next(&num))) {
				u32 *s;

				w->held = held(p, w->at, w->walked);
				if (w->held)
					break;
				s = bpf_map_lookup_elem(&spans, &w->at);
				if (!s || *s == 0 || w->at >= w->walked || *s >= w->walked - w->at)
					break;
				w->at += *s;
			}
			bpf_iter_num_destroy(&num);
			if (w->held) {
				w->old = w->at + w->held;
				if (same_count(p, w->held)) {
					if ((w->at == w->n && w->off == 0) ||
					    ctxtop_move(w->n, w->at, w->held, w->at - w->off))
						w->span = w->held;
				} else {
					/*
					 * Visited whole: with more threads
					 * than the records it had, it needs
					 * room before the next process's.
					 */
					struct signal_struct *sig = p->signal;
					u32 need = w->n + (sig ? (u32)sig->nr_threads : 0);

					if (need > w->old && ctxtop_shift(w->old, w->walked, need - w->old)) {
						w->copied += w->walked - w->old;
						w->walked += need - w->old;
						w->off += need - w->old;
						if (w->shifted > need)
							w->shifted = need;
						w->old = need;
					}
				}
			} else {
				/* New, or not found: what follows is not known. */
				w->track = false;
			}
		}
		w->relist = false;
		w->d0 = w->d;
		if (w->span) {
			/*
			 * Its threads are where the last walk left them: look
			 * at those woken since (their bits; all the slots,
			 * when the process was), and at the slots of this
			 * walk's phase.
			 */
			int *jp;

			w->ok = true;
			w->step = w->marked ? 1 : SCRUB;
			w->from = w->n;
			if (!w->marked)
				w->from = w->n + (w->phase + SCRUB - w->n % SCRUB) % SCRUB;
			w->cnt = w->from < w->n + w->span ? (w->n + w->span - w->from + w->step - 1) / w->step : 0;
			bpf_iter_num_new(&num, 0, w->cnt);
			while ((jp = bpf_iter_num_next(&num))) {
				u32 i = w->from + (u32)*jp * w->step;
				struct rec *ri = bpf_map_lookup_elem(&recs, &i);

				if (!ri)
					break;
				if (!take(&dirty_tids, ri->tid) && (i % SCRUB) != w->phase)
					continue;
				w->looked++;
				if (!look(i, tgid, &w->d)) {
					w->ok = false;
					break;
				}
			}
			bpf_iter_num_destroy(&num);
			if (w->ok) {
				w->n += w->span;
				if (w->n > w->old)
					w->track = false;
				continue;
			}
			/*
			 * A thread of it is gone or replaced, so its threads
			 * are not where they were: visit it whole now, and
			 * list every one of its records, those the looks
			 * rewrote among them.
			 */
			w->d = w->d0;
			w->relist = true;
			unmove(w);
		}
		w->first = w->n;
		w->count = 0;
		w->carry = false;
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
			bool again;

			/* Its bit is this visit's: taken before the reads. */
			take(&dirty_tids, t->pid);
			again = active(t, &state);
			w->looked++;
			k = w->n;
			r = bpf_map_lookup_elem(&recs, &k);
			if (!r)
				w->lost = true;
			/* A thread born or gone shifts the slots after it,
			 * which are then written afresh. */
			if (r && (w->relist || k >= w->shifted || stale(r, t, state))) {
				fill(r, t);
				list_changed(k, &w->d);
				again = true;
			}
			if (again) {
				set(&dirty_tids, t->pid);
				w->carry = true;
			}
			w->n++;
			w->count++;
		}
		bpf_iter_task_destroy(&threads);
		bpf_task_release(leader);
		k = w->first;
		span_at = bpf_map_lookup_elem(&spans, &k);
		if (span_at)
			*span_at = w->count;
		if (w->carry)
			set(&dirty, tgid);
		/* Records written past old overwrote the last walk's. */
		if (w->n > w->old)
			w->track = false;
	}
	bpf_iter_task_destroy(&procs);
	bpf_rcu_read_unlock();
	k = 0;
	slot = bpf_map_lookup_elem(&changed, &k);
	if (slot)
		*slot = w->d;
	ctl->moves = w->moves;
	ctl->shifted = w->copied;
	/* Records past the array were not written: keep none next time. */
	ctl->walked = w->lost ? 0 : w->n;
	ctl->skipped = w->n > w->looked ? w->n - w->looked : 0;
	return w->n;
}

/*
 * The walk without the skipping: every thread, one loop over the task
 * list (ALL_THREADS), writing the records that moved as ctxtop_walk does.
 * It is what a pass runs until the skipping walk is loaded, and it loads
 * in a few milliseconds where ctxtop_walk's loops take the verifier some
 * 40: a start, and a host too small to skip on, never load ctxtop_walk at
 * all. Returns how many threads it found.
 *
 * It keeps the marks as a visit of ctxtop_walk does (takes each thread's
 * bit before reading it, marks it again when it was active or its record
 * rewritten) and the spans, so that when the hooks were attached before
 * it ran, the skipping walk's first run after it need not visit every
 * process: that visit cost a plain walk's worth (every thread, 3 ms at
 * 10,000) in a pass of its own when the skipping walk's load outlasted
 * the first pass's wait. Without the hooks the marks are set by nobody
 * else and cost a read a thread.
 */
SEC("syscall")
int ctxtop_walk_all(void *ctx)
{
	struct bpf_iter_task it;
	struct task_struct *t;
	struct walk_ctl *ctl;
	struct rec *r;
	u64 *slot;
	u32 *span_at;
	u32 n = 0, d = 0, k = 0, tgid, state, cur = 0, first = 0;
	bool lost = false, carry = false, again;

	bpf_rcu_read_lock();
	bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&it))) {
		if (t->pid == 0)
			continue;
		tgid = t->tgid;
		if (filter_tgid && !bpf_map_lookup_elem(&targets, &tgid))
			continue;
		if (n == 0 || tgid != cur) {
			/* A process's threads are together: the last one's
			 * span ends here. Its bit is taken before its
			 * threads' are. */
			if (n > 0) {
				span_at = bpf_map_lookup_elem(&spans, &first);
				if (span_at)
					*span_at = n - first;
				if (carry)
					set(&dirty, cur);
			}
			take(&dirty, tgid);
			cur = tgid;
			first = n;
			carry = false;
		}
		take(&dirty_tids, t->pid);
		again = active(t, &state);
		r = bpf_map_lookup_elem(&recs, &n);
		if (!r)
			lost = true;
		if (r && stale(r, t, state)) {
			fill(r, t);
			list_changed(n, &d);
			again = true;
		}
		if (again) {
			set(&dirty_tids, t->pid);
			carry = true;
		}
		n++;
	}
	bpf_iter_task_destroy(&it);
	bpf_rcu_read_unlock();
	if (n > 0) {
		span_at = bpf_map_lookup_elem(&spans, &first);
		if (span_at)
			*span_at = n - first;
		if (carry)
			set(&dirty, cur);
	}
	k = 0;
	slot = bpf_map_lookup_elem(&changed, &k);
	if (slot)
		*slot = d;
	ctl = bpf_map_lookup_elem(&control, &k);
	if (ctl) {
		/* Records past the array were not written: keep none. */
		ctl->walked = lost ? 0 : n;
		ctl->skipped = 0;
	}
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
	u32 tid = p->pid, tgid = p->tgid;
	u64 *word, bit;

	if (c)
		__sync_fetch_and_add(&c->n, 1);
	/* The thread's bit before the process's: a walk that takes the
	 * process's bit then finds the thread's. */
	k = tid / 64;
	bit = 1ULL << (tid % 64);
	word = bpf_map_lookup_elem(&dirty_tids, &k);
	if (word && (!c || !(*word & bit)))
		__sync_fetch_and_or(word, bit);
	k = tgid / 64;
	bit = 1ULL << (tgid % 64);
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
