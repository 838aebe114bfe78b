// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Where target threads block and where their wakers wake them, aggregated
 * in the kernel.
 *
 * sched_switch runs in prev's context: when prev gives up its CPU
 * voluntarily (not preempted and no longer TASK_RUNNING, the kernel's own
 * rule for nvcsw) and is a target, its kernel and user stacks go into a
 * stack trace map and the (tid, kernel stack, user stack) count goes up.
 * sched_waking runs in the waker's context: when the wakee is a target and
 * the waking is a task's, not an interrupt's (whose current is only the
 * task the interrupt came upon), the waker's stacks are taken and the
 * (wakee, waker, stacks) count goes up. Interrupt wakings are only counted.
 *
 * Taking two stacks costs a microsecond, so a target that switches often
 * is sampled: its entry in the target map says to take one event in
 * `every` (user space sets it from the thread's rate, keeping the samples
 * to a budget). Each event kind has a countdown; when it runs out the
 * event is sampled and the countdown starts again from a random length of
 * mean `every`. The random gaps keep the sampling independent of the
 * stack, even for a thread that blocks in a fixed rotation (every 4th
 * event would always land on the same stack of a rotation of 4), so the
 * shares of the samples estimate the shares of the events; the counts are
 * of samples.
 *
 * Every other thread pays the target filter: one read of the slot its
 * thread ID picks in the target table (an array lookup the verifier
 * inlines: no helper call; a hash map lookup, or task storage, cost 4-12
 * ns more a run here), and a target's unsampled event that and a
 * decrement. User space drains
 * the count maps once per refresh with a batch lookup-and-delete and frees
 * the stacks no count refers to any more.
 *
 * A Go program's thread that blocks because its goroutine waits (a
 * sync.Mutex, a channel, a sleep) blocks in the Go scheduler: the goroutine
 * parks through runtime.mcall, which saves the goroutine's pc and frame
 * pointer in g.sched and switches to the thread's scheduler stack (g0) with
 * the frame pointer cleared. The thread's user stack then holds only
 * scheduler frames. For a target of a process user space registered as Go
 * (go_procs, with its runtime's struct offsets), the switch also follows
 * the goroutine the thread is locked to, if any, from g.sched along its
 * frame pointers: see go_parked_stack.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Keep in step with the constants in Go (stacks.go). */
#define MAX_TARGETS 64
#define TARGET_SLOTS 4096	/* a power of two, well above MAX_TARGETS */
#define TARGET_PROBES 8
#define MAX_STACKS 8192
#define MAX_DEPTH 64
#define MAX_BLOCKED 4096
#define MAX_WAKES 4096
#define MAX_GO_PROCS 128
#define GO_DEPTH 32
#define MAX_STACK_BYTES 8192	/* a power of two: the copy's size is masked by it - 1 */
#define CAPTURE_RING (8 << 20)	/* some 2,000 captures of 4 KiB: a second's at the default budget */

#define BPF_F_USER_STACK (1ULL << 8)
#define RB_NO_WAKEUP 1ULL	/* BPF_RB_NO_WAKEUP */

struct block_key {
	u32 tid;
	u32 pid;
	s32 kstack;	/* a stack map id, or -errno when the stack was not kept */
	s32 ustack;
	/*
	 * The return addresses of the parked goroutine the thread blocked
	 * for, innermost first, 0-padded; all 0 for none. In the key itself:
	 * a stack trace map is written only by bpf_get_stackid, which walks
	 * the current registers, and the frames as the key can never collide.
	 */
	u64 gstack[GO_DEPTH];
};

struct wake_key {
	u32 wakee_tid;
	u32 waker_tid;
	u32 waker_pid;
	s32 kstack;
	s32 ustack;
	u32 _pad;
};

struct wake_val {
	u64 count;
	char waker_comm[TASK_COMM_LEN];
};

/* Per CPU, so no CPU bounces another's cache line. */
struct counters {
	u64 dropped;		/* events not counted: a count map was full */
	u64 irq_wakings;	/* sampled target wakings in an interrupt: counted here only */
	u64 stack_errors;	/* stacks not kept (map full, a collision) */
	u64 capture_lost;	/* captures the ring had no room for */
};

/*
 * A sampled event's user registers and the top of the user stack, for
 * user space to unwind with the binaries' CFI (code built without frame
 * pointers: distribution libc, most -O2 programs), as perf --call-graph
 * dwarf does. Sent through the capture ring, header then `len` bytes.
 */
struct capture {
	u32 kind;	/* CAPTURE_BLOCK (tid blocked) or CAPTURE_WAKE (tid woke target) */
	u32 tid;	/* whose stack it is */
	u32 pid;
	u32 target;	/* the target thread: tid itself for a block */
	u32 weight;	/* the events this sample stands for: the target's `every` */
	s32 kstack;
	u32 len;	/* stack bytes copied from sp up */
	u32 _pad;
	u64 ip, sp, bp;
	char comm[TASK_COMM_LEN];	/* tid's name (the waker's) */
	u8 stack[MAX_STACK_BYTES];
};

#define CAPTURE_BLOCK 0
#define CAPTURE_WAKE 1

/*
 * Where a Go binary's runtime keeps what go_parked_stack reads, in bytes
 * from the start of its struct (they change between Go versions; user
 * space knows them per binary).
 */
struct go_runtime {
	u32 g_m;		/* g.m: the thread (m) a goroutine runs on */
	u32 g_stack;		/* g.stack: its stack's bounds, {lo, hi} */
	u32 g_sched_pc;		/* g.sched.pc, g.sched.bp: saved when it parked */
	u32 g_sched_bp;
	u32 m_g0;		/* m.g0: the thread's scheduler goroutine */
	u32 m_lockedg;		/* m.lockedg: the goroutine locked to the thread */
};

/*
 * A target thread's sampling: one event in `every` is taken; the
 * countdowns are the events left before the next sample of each kind.
 * Updated without atomics: two CPUs racing on one target's countdown (a
 * waking from each) lose a decrement at worst, which shifts no share.
 */
struct target {
	u32 tid;	/* 0: an empty slot */
	u32 every;
	u32 switch_left;
	u32 waking_left;
};

/*
 * The targets by thread ID: a target lies in slot tid % TARGET_SLOTS or,
 * when that is taken, in one of the next TARGET_PROBES-1 (user space
 * places them). A lookup stops at the first empty slot; with at most 64
 * targets in 4,096 slots almost every other thread's lookup is one read of
 * an empty slot. User space rewrites slots while the programs run: a
 * lookup racing with it may miss a target or see a slot half written, one
 * event's sampling decision at worst.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TARGET_SLOTS);
	__type(key, u32);
	__type(value, struct target);
} targets SEC(".maps");

static __always_inline struct target *target_of(u32 tid)
{
	if (!tid)
		return NULL;	/* the idle tasks */
	for (u32 i = 0; i < TARGET_PROBES; i++) {
		u32 slot = (tid + i) & (TARGET_SLOTS - 1);
		struct target *t = bpf_map_lookup_elem(&targets, &slot);

		if (!t || !t->tid)
			return NULL;
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, MAX_STACKS);
	__uint(key_size, sizeof(u32));
	__uint(value_size, MAX_DEPTH * sizeof(u64));
} stack_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BLOCKED);
	__type(key, struct block_key);
	__type(value, u64);
} blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_WAKES);
	__type(key, struct wake_key);
	__type(value, struct wake_val);
} wakes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct counters);
} counter_map SEC(".maps");

/* The registered Go processes by tgid (user space keeps only the targets'). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_GO_PROCS);
	__type(key, u32);
	__type(value, struct go_runtime);
} go_procs SEC(".maps");

/*
 * Room for one block key per CPU: with a goroutine's frames it is too big
 * for the BPF stack.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct block_key);
} block_scratch SEC(".maps");

/* Room for one capture per CPU: far too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct capture);
} capture_scratch SEC(".maps");

/*
 * Captures to user space, drained once per refresh. Written with
 * BPF_RB_NO_WAKEUP: the reader never sleeps on it, so no capture wakes
 * ctxtop (a wake-up per capture would be a context switch of its own).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CAPTURE_RING);
} captures SEC(".maps");

/*
 * How many bytes of user stack a capture copies; 0 takes no captures (the
 * frame-pointer stacks only, as before). Set at load.
 */
volatile const u32 stack_bytes = 0;

/*
 * Where this CPU's preempt count lies in bytes from its run queue (see
 * internal/waketrace); 0 where the kernel has none as a per-CPU variable, and
 * every waking then counts as a task's.
 */
volatile const s64 preempt_count_from_rq = 0;

#define SOFTIRQ_OFFSET (1u << 8)
#define HARDIRQ_MASK (0xfu << 16)
#define NMI_MASK (0xfu << 20)

static __always_inline bool in_interrupt_ctx(void)
{
	struct task_struct *cur;
	struct cfs_rq *cfs;
	u32 pc = 0;
	u64 rq;

	if (!preempt_count_from_rq || !bpf_core_field_exists(struct sched_entity, cfs_rq))
		return false;
	cur = bpf_get_current_task_btf();
	cfs = cur->se.cfs_rq;
	rq = cfs ? (u64)cfs->rq : 0;
	if (!rq || bpf_probe_read_kernel(&pc, sizeof(pc), (void *)(rq + preempt_count_from_rq)))
		return false;
	return pc & (HARDIRQ_MASK | NMI_MASK | SOFTIRQ_OFFSET);
}

static __always_inline struct counters *stats(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&counter_map, &zero);
}

/*
 * sampled counts an event of the target down; true when it is to be
 * taken, and then the countdown restarts at a random length in
 * [1, 2*every-1].
 */
static __always_inline bool sampled(struct target *t, u32 *left)
{
	u32 every = t->every;

	if (every <= 1)
		return true;
	if (*left > 1) {
		(*left)--;
		return false;
	}
	*left = bpf_get_prandom_u32() % (2 * every - 1) + 1;
	return true;
}

static __always_inline s32 stack_of(void *ctx, u64 flags)
{
	long id = bpf_get_stackid(ctx, &stack_map, flags);

	if (id < 0) {
		struct counters *c = stats();

		if (c)
			c->stack_errors++;
	}
	return id;
}

/*
 * capture sends task's user registers and the top stack_bytes of its user
 * stack, with the kernel stack, to the capture ring; false when it does
 * not (no captures asked for, a kernel thread, a registered Go process), and the event then goes to
 * the count maps as before. task is the current task (prev at the switch,
 * the waker at the waking): its user stack is the one readable.
 */
static __always_inline bool capture(void *ctx, struct task_struct *task, u32 kind, u32 target, u32 weight)
{
	struct pt_regs *regs;
	struct capture *c;
	struct counters *st;
	u32 zero = 0, n;
	u64 id;

	if (!stack_bytes || (task->flags & 0x00200000 /* PF_KTHREAD */))
		return false;
	id = bpf_get_current_pid_tgid();
	/*
	 * A registered Go process keeps frame pointers, and its runtime
	 * switches stacks (systemstack, mcall) that a copy of one stack's top
	 * cannot follow: the kernel's walk and the goroutine's serve it.
	 */
	if (bpf_map_lookup_elem(&go_procs, &(u32){id >> 32}))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	c = bpf_map_lookup_elem(&capture_scratch, &zero);
	/* The registers saved at the entry from user mode, or there are none to unwind. */
	if (!regs || !c || (regs->cs & 3) != 3)
		return false;
	c->kind = kind;
	c->tid = (u32)id;
	c->pid = id >> 32;
	c->target = target;
	c->weight = weight;
	c->ip = regs->ip;
	c->sp = regs->sp;
	c->bp = regs->bp;
	if (!c->ip || !c->sp)
		return false;
	bpf_get_current_comm(c->comm, sizeof(c->comm));
	c->kstack = stack_of(ctx, 0);
	n = stack_bytes & (MAX_STACK_BYTES - 1);
	if (!n)
		n = MAX_STACK_BYTES - 1;
	if (bpf_probe_read_user(c->stack, n, (void *)c->sp)) {
		/* The stack ends within n bytes (a main thread near its top): the rest of its page. */
		n = (4096 - (c->sp & 4095)) & (MAX_STACK_BYTES - 1);
		if (bpf_probe_read_user(c->stack, n, (void *)c->sp))
			n = 0;
	}
	c->len = n;
	if (bpf_ringbuf_output(&captures, c, offsetof(struct capture, stack) + (n & (MAX_STACK_BYTES - 1)), RB_NO_WAKEUP)) {
		st = stats();
		if (st)
			st->capture_lost++;
	}
	return true;
}

/* Reads a word of the current task's memory; nonzero when it cannot. */
#define read_user_u64(v, addr) bpf_probe_read_user(v, sizeof(u64), (void *)(addr))

/*
 * go_parked_stack follows the goroutine a Go thread blocks for, writing
 * its return addresses into k->gstack (all 0 when none is followed).
 *
 * On amd64 Go code keeps the current goroutine's g in R14 (ABIInternal,
 * Go 1.17 and later), and the scheduler's futex wait leaves it there, so
 * the registers saved at the system call hold it. Only when that g is the
 * thread's scheduler goroutine (g.m.g0 == g: checked, which also rejects
 * R14 of code that is not Go's, a cgo call or a C thread) is the thread in
 * the scheduler; on a goroutine's own stack (a blocking system call) the
 * user stack already holds the goroutine's frames. The scheduler then
 * blocks on behalf of one goroutine only when one is locked to the thread
 * (LockOSThread; m.lockedg): that goroutine parked, and its M waits to be
 * handed it again. An M without one is only idle in the scheduler, waiting
 * for any work: no one goroutine's frames belong there, so none are added.
 *
 * The walk starts at g.sched.pc (the return address into the function
 * that called mcall, runtime.gopark) and g.sched.bp (mcall saves the
 * caller's frame pointer, dereferenced), then follows saved frame
 * pointers: the return address at [bp+8], the next bp at [bp]. Every read
 * is of the target's own memory, which anyone able to run code in it may
 * have laid out: bounded to GO_DEPTH frames, only inside the goroutine's
 * stack bounds, only upward, and a failed read ends the walk.
 */
static __always_inline void go_parked_stack(struct task_struct *prev, struct block_key *k)
{
	struct go_runtime *rt = bpf_map_lookup_elem(&go_procs, &k->pid);
	u64 g, m, g0, lg = 0, bounds[2] = {}, pc = 0, bp = 0;
	struct pt_regs *regs;
	u32 i;

	if (rt && bpf_core_field_exists(struct pt_regs, r14) && (regs = (struct pt_regs *)bpf_task_pt_regs(prev))) {
		g = regs->r14;
		/* g.stack is {lo, hi}: one read. */
		if (read_user_u64(&m, g + rt->g_m) || read_user_u64(&g0, m + rt->m_g0) || g0 != g ||
		    read_user_u64(&lg, m + rt->m_lockedg) || !lg ||
		    bpf_probe_read_user(bounds, sizeof(bounds), (void *)(lg + rt->g_stack)) ||
		    read_user_u64(&bp, lg + rt->g_sched_bp) || read_user_u64(&pc, lg + rt->g_sched_pc))
			pc = 0;
	}
	for (i = 0; i < GO_DEPTH; i++) {
		u64 frame[2];	/* the caller's bp, the return address */

		k->gstack[i] = pc;
		if (!pc || bp < bounds[0] || bp >= bounds[1] || bounds[1] - bp < sizeof(frame) ||
		    bpf_probe_read_user(frame, sizeof(frame), (void *)bp)) {
			pc = 0;
			continue;
		}
		pc = frame[1];
		/* The next frame is further up the stack, or the chain is broken. */
		bp = frame[0] > bp ? frame[0] : 0;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ctxtop_stacks_switch, bool preempt, struct task_struct *prev)
{
	struct block_key *k;
	struct target *t;
	u64 one = 1, *v;
	u32 tid, zero = 0;

	if (preempt)
		return 0;
	tid = prev->pid;
	t = target_of(tid);
	if (!t)
		return 0;
	/* Read after the filter: only a target's switch pays for it. */
	if (bpf_core_field_exists(prev->__state) && prev->__state == 0)
		return 0;
	if (!sampled(t, &t->switch_left))
		return 0;
	if (capture(ctx, prev, CAPTURE_BLOCK, tid, t->every))
		return 0;
	k = bpf_map_lookup_elem(&block_scratch, &zero);
	if (!k)
		return 0;
	k->tid = tid;
	k->pid = prev->tgid;
	k->kstack = stack_of(ctx, 0);
	k->ustack = stack_of(ctx, BPF_F_USER_STACK);
	go_parked_stack(prev, k);
	v = bpf_map_lookup_elem(&blocked, k);
	if (v) {
		__sync_fetch_and_add(v, 1);
	} else if (bpf_map_update_elem(&blocked, k, &one, BPF_NOEXIST)) {
		/* Another CPU may have added it meanwhile. */
		v = bpf_map_lookup_elem(&blocked, k);
		if (v) {
			__sync_fetch_and_add(v, 1);
		} else {
			struct counters *c = stats();

			if (c)
				c->dropped++;
		}
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ctxtop_stacks_waking, struct task_struct *p)
{
	struct wake_key k = {};
	struct wake_val *v;
	struct counters *c;
	struct target *t;
	u32 wakee = p->pid;
	u64 id;

	t = target_of(wakee);
	if (!t)
		return 0;
	/* Still on its run queue: it never slept for this waking (see internal/waketrace). */
	if (p->on_rq && !(bpf_core_field_exists(p->se.sched_delayed) && p->se.sched_delayed))
		return 0;
	/* Sampled before the interrupt test, so interrupt wakings are sampled alike. */
	if (!sampled(t, &t->waking_left))
		return 0;
	if (in_interrupt_ctx()) {
		c = stats();
		if (c)
			c->irq_wakings++;
		return 0;
	}
	if (capture(ctx, bpf_get_current_task_btf(), CAPTURE_WAKE, wakee, t->every))
		return 0;
	id = bpf_get_current_pid_tgid();
	k.wakee_tid = wakee;
	k.waker_tid = (u32)id;
	k.waker_pid = id >> 32;
	k.kstack = stack_of(ctx, 0);
	k.ustack = stack_of(ctx, BPF_F_USER_STACK);
	v = bpf_map_lookup_elem(&wakes, &k);
	if (v) {
		__sync_fetch_and_add(&v->count, 1);
		return 0;
	}
	{
		struct wake_val nv = {.count = 1};

		bpf_get_current_comm(nv.waker_comm, sizeof(nv.waker_comm));
		if (!bpf_map_update_elem(&wakes, &k, &nv, BPF_NOEXIST))
			return 0;
	}
	v = bpf_map_lookup_elem(&wakes, &k);
	if (v) {
		__sync_fetch_and_add(&v->count, 1);
		return 0;
	}
	c = stats();
	if (c)
		c->dropped++;
	return 0;
}
