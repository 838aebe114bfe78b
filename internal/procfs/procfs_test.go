package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{"full", "cpu  1 2 3\ncpu0 1 2 3\ncpu1 4 5 6\nintr 452425 0 0 7\nctxt 629108\nbtime 1\nprocs_running 3\nprocs_blocked 1\n",
			Stat{ContextSwitches: 629108, Interrupts: 452425, ProcsRunning: 3, ProcsBlocked: 1, CPUs: 2}, false},
		{"only ctxt", "ctxt 5", Stat{ContextSwitches: 5}, false},
		{"no ctxt", "intr 5\n", Stat{}, true},
		{"bad ctxt", "ctxt x5\n", Stat{}, true},
		{"empty ctxt", "ctxt\n", Stat{}, true},
		{"overflow", "ctxt 99999999999999999999999\n", Stat{}, true},
		{"empty", "", Stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in), "stat")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrParse) {
				t.Errorf("err %v does not wrap ErrParse", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseInterrupts(t *testing.T) {
	const two = `           CPU0       CPU1       
  0:         33          0   IO-APIC   2-edge      timer
 24:          1          4  IO-APIC   5-edge      ACPI:Ged
NMI:          0          0   Non-maskable interrupts
RES:       6739       6350   Rescheduling interrupts
CAL:     100000         20   Function call interrupts
TLB:          7          8   TLB shootdowns
ERR:          0
MIS:          0
`
	tests := []struct {
		name    string
		in      string
		want    Interrupts
		wantErr bool
	}{
		{"two cpus", two, Interrupts{CPUs: 2, ReschedIPIs: 13089, ReschedPerCPU: []uint64{6739, 6350}, CallIPIs: 100020,
			PerCPU: []uint64{33 + 1 + 6739 + 100000 + 7, 4 + 6350 + 20 + 8}}, false},
		{"no RES row", "  CPU0\n 1: 5 x\n", Interrupts{CPUs: 1, ReschedPerCPU: []uint64{0}, PerCPU: []uint64{5}}, false},
		{"short RES row", "  CPU0 CPU1\nRES: 5\n", Interrupts{}, true},
		{"bad header", "hello\n", Interrupts{}, true},
		{"empty", "", Interrupts{}, true},
		{"no colon", "  CPU0\nRES 5\n", Interrupts{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Interrupts
			err := ParseInterrupts([]byte(tt.in), "interrupts", &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseInterruptsReusesBuffers(t *testing.T) {
	in := []byte("  CPU0 CPU1\nRES: 1 2 x\n 3: 4 5\n")
	var dst Interrupts
	if err := ParseInterrupts(in, "interrupts", &dst); err != nil {
		t.Fatal(err)
	}
	// A second parse must not add onto the first one's sums.
	if err := ParseInterrupts(in, "interrupts", &dst); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{5, 7}, dst.PerCPU); diff != "" {
		t.Errorf("PerCPU (-want +got)\n%s", diff)
	}
	if n := testing.AllocsPerRun(100, func() { _ = ParseInterrupts(in, "interrupts", &dst) }); n != 0 {
		t.Errorf("ParseInterrupts allocates %v times per call with warm buffers", n)
	}
}

func TestParsePressureCPUSome(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    PressureSome
		wantErr bool
	}{
		{"normal", "some avg10=0.31 avg60=2.20 avg300=0.96 total=19669245\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			PressureSome{Avg10: 0.31, Total: 19669245, HasTotal: true}, false},
		{"no total", "some avg10=7 avg60=2.20\n", PressureSome{Avg10: 7}, false},
		{"hundred", "some avg10=100.00 avg60=2.20\n", PressureSome{Avg10: 100}, false},
		{"trailing blanks", "some avg10=1.00 total=5  \n", PressureSome{Avg10: 1, Total: 5, HasTotal: true}, false},
		{"bad total", "some avg10=1.00 total=x1\n", PressureSome{}, true},
		{"negative total", "some avg10=1.00 total=-1\n", PressureSome{}, true},
		{"no some", "full avg10=0.00 total=3\n", PressureSome{}, true},
		{"bad avg10", "some avg10=abc\n", PressureSome{}, true},
		{"wrong key", "some avg60=1.00\n", PressureSome{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePressureCPUSome([]byte(tt.in), "pressure/cpu")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParsePressureCPUSome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseLoadAvgThreads: the task walk sizes its array and decides to
// load the skipping walk at once by the host's thread count, which
// sysinfo(2) wraps past 65,535: at 100,000 threads the first walk grew the
// array, and the reload threw away the skipping walk loaded beside it.
func TestParseLoadAvgThreads(t *testing.T) {
	for in, want := range map[string]int{
		"0.52 0.31 0.20 3/1234 5678\n":          1234,
		"2483.83 829.43 307.88 1/100236 101398": 100236,
	} {
		if n, ok := ParseLoadAvgThreads([]byte(in)); !ok || n != want {
			t.Errorf("ParseLoadAvgThreads(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
	for _, bad := range []string{"", "0.52 0.31 0.20", "0.52 0.31 0.20 31234 5678", "0.52 0.31 0.20 3/x 5678", "0.52 0.31 0.20 3/99999999999 1"} {
		if n, ok := ParseLoadAvgThreads([]byte(bad)); ok {
			t.Errorf("ParseLoadAvgThreads(%q) = %d, want refused", bad, n)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	got, err := ParseLoadAvg([]byte("0.00 0.02 12.50 1/85 5767\n"), "loadavg")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([3]float64{0, 0.02, 12.5}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for _, bad := range []string{"", "0.1 0.2", "a b c", "1.2.3 0 0", "1. 0 0"} {
		if _, err := ParseLoadAvg([]byte(bad), "loadavg"); err == nil {
			t.Errorf("ParseLoadAvg(%q) succeeded, want error", bad)
		}
	}
}

func TestParseLoadAvgLastPID(t *testing.T) {
	got, err := ParseLoadAvgLastPID([]byte("0.00 0.02 12.50 1/85 5767\n"), "loadavg")
	if err != nil {
		t.Fatal(err)
	}
	if got != 5767 {
		t.Errorf("last PID %d, want 5767", got)
	}
	for _, bad := range []string{"", "5767", "0.1 0.2 0.3", "0 0 0 1/85", "0 0 0 185 7", "0 0 0 1/85 x", "0 0 0 1/85 -7"} {
		if _, err := ParseLoadAvgLastPID([]byte(bad), "loadavg"); err == nil {
			t.Errorf("ParseLoadAvgLastPID(%q) succeeded, want error", bad)
		}
	}
}

const statusSample = "Name:\tpool 1 (x)\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t5764\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545\n"

func TestParseTaskStatus(t *testing.T) {
	type view struct {
		Name, CPUs string
		State      byte
		Vol, Invol uint64
	}
	tests := []struct {
		name    string
		in      string
		want    view
		wantErr bool
	}{
		{"normal", statusSample, view{"pool 1 (x)", "0-1", 'S', 150, 545}, false},
		{"no cpus list", "State:\tR (running)\nvoluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n", view{"", "", 'R', 1, 2}, false},
		{"missing invol", "State:\tR (running)\nvoluntary_ctxt_switches:\t1\n", view{}, true},
		{"bad number", "State:\tR (running)\nvoluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t2\n", view{}, true},
		{"bad state", "State:\tRR\nvoluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2\n", view{}, true},
		{"empty", "", view{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseTaskStatus([]byte(tt.in), "status")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			got := view{string(s.Name), string(s.CPUsAllowed), s.State, s.VoluntarySwitches, s.InvoluntarySwitches}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseTaskStatusDoesNotAllocate(t *testing.T) {
	b := []byte(statusSample)
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseTaskStatus(b, "status") }); n != 0 {
		t.Errorf("ParseTaskStatus allocates %v times per call", n)
	}
}

func TestParseTaskSchedstat(t *testing.T) {
	got, err := ParseTaskSchedstat([]byte("1034853 20341 12\n"), "schedstat")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TaskSchedstat{RunNs: 1034853, WaitNs: 20341, Timeslices: 12}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for _, bad := range []string{"", "1 2", "1 2 x", "-1 2 3"} {
		if _, err := ParseTaskSchedstat([]byte(bad), "schedstat"); err == nil {
			t.Errorf("ParseTaskSchedstat(%q) succeeded, want error", bad)
		}
	}
}

// A real stat line from a thread whose name holds ") (" to check that fields
// are counted from the last parenthesis.
const statSample = "5764 (a) (b c) S 5761 5761 4174 34816 5761 4194304 95 0 0 0 0 0 0 0 20 0 1 0 918273 2998272 224 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParseTaskStat(t *testing.T) {
	got, err := ParseTaskStat([]byte(statSample), "stat")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TaskStat{Comm: []byte("a) (b c"), State: 'S', Flags: 4194304, NumThreads: 1, StartTime: 918273, LastCPU: 1}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got.Flags&KernelThread != 0 {
		t.Errorf("a user thread's flags %#x say kernel thread", got.Flags)
	}
	// A kernel thread's (rcu_preempt, Linux 6.18): PF_KTHREAD in flags.
	k, err := ParseTaskStat([]byte("15 (rcu_preempt) I 2 0 0 0 -1 2129984 0 0 0 0 28 2331 0 0 20 0 1 0 22 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"), "stat")
	if err != nil || k.Flags&KernelThread == 0 {
		t.Errorf("rcu_preempt's stat: flags %#x, %v; want PF_KTHREAD", k.Flags, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 x S", "1 x) S 5761 5761 4174 34816 5761 4194304 95 0 0 0 0 0 0 0 20 0 1 0 918273 2998272 224 1 1 1 0 0 0 0 0 0 0 0 0 0 17 1", "1 (x) SS 5761 5761 4174 34816 5761 4194304 95 0 0 0 0 0 0 0 20 0 1 0 918273 2998272 224 1 1 1 0 0 0 0 0 0 0 0 0 0 17 1"} {
		if _, err := ParseTaskStat([]byte(bad), "stat"); err == nil {
			t.Errorf("ParseTaskStat(%q) succeeded, want error", bad)
		}
	}
}

func TestParseComm(t *testing.T) {
	if got := string(ParseComm([]byte("ping-futex\n"))); got != "ping-futex" {
		t.Errorf("ParseComm = %q", got)
	}
	if got := string(ParseComm(nil)); got != "" {
		t.Errorf("ParseComm(nil) = %q", got)
	}
}

func TestNewFSRejectsNonProcfs(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewFS(filepath.Join(dir, "missing")); !errors.Is(err, ErrNotProcfs) {
		t.Errorf("missing dir: err = %v, want ErrNotProcfs", err)
	}
	if _, err := NewFS(dir); !errors.Is(err, ErrNotProcfs) {
		t.Errorf("empty dir: err = %v, want ErrNotProcfs", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("ctxt 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFS(dir); err != nil {
		t.Errorf("dir with stat: %v", err)
	}
}

func TestReadersAgainstLiveProc(t *testing.T) {
	fs, err := NewFS("/proc")
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	pid := os.Getpid()
	if _, err := fs.TaskStatus(pid, pid); err != nil {
		t.Errorf("TaskStatus(self): %v", err)
	}
	if _, err := fs.TaskSchedstat(pid, pid); err != nil {
		t.Errorf("TaskSchedstat(self): %v", err)
	}
	if st, err := fs.TaskStat(pid, pid); err != nil || st.StartTime == 0 {
		t.Errorf("TaskStat(self) = %+v, %v", st, err)
	}
	if c, err := fs.TaskComm(pid, pid); err != nil || c == "" {
		t.Errorf("TaskComm(self) = %q, %v", c, err)
	}
	if in, err := fs.Interrupts(); err != nil || in.CPUs == 0 {
		t.Errorf("Interrupts() = %+v, %v", in, err)
	}
	if _, err := fs.LoadAvg(); err != nil {
		t.Errorf("LoadAvg(): %v", err)
	}
}

func TestParseTaskSched(t *testing.T) {
	sched := "ctxtop (8740, #threads: 3)\n-------------------------------------------------------------------\n" +
		"se.exec_start                                :      14278481.410193\n" +
		"se.nr_migrations                             :                   17\n" +
		"nr_switches                                  :                  565\n" +
		"nr_voluntary_switches                        :                  376\n" +
		"nr_involuntary_switches                      :                  189\n" +
		"current_node=0, numa_group_id=0\n"
	want := TaskSched{Migrations: 17, VoluntarySwitches: 376, InvoluntarySwitches: 189, HasMigrations: true, HasSwitches: true}
	if diff := cmp.Diff(want, ParseTaskSched([]byte(sched))); diff != "" {
		t.Errorf("ParseTaskSched (-want +got)\n%s", diff)
	}
	for _, tc := range []struct {
		in   string
		want TaskSched
	}{
		{"", TaskSched{}},
		{"se.nr_migrations : 3\n", TaskSched{Migrations: 3, HasMigrations: true}},
		// One switch count alone is no pair to rate.
		{"nr_voluntary_switches : 5\n", TaskSched{}},
		{"nr_voluntary_switches : 5\nnr_involuntary_switches : x\n", TaskSched{}},
		{"nr_voluntary_switches : 5\nnr_involuntary_switches : 99999999999999999999999\n", TaskSched{}},
		{"nr_voluntary_switches:5\nnr_involuntary_switches:6", TaskSched{VoluntarySwitches: 5, InvoluntarySwitches: 6, HasSwitches: true}},
		{"se.nr_migrations : -1\nnr_voluntary_switches : 1\nnr_involuntary_switches : 2\n", TaskSched{VoluntarySwitches: 1, InvoluntarySwitches: 2, HasSwitches: true}},
	} {
		if diff := cmp.Diff(tc.want, ParseTaskSched([]byte(tc.in))); diff != "" {
			t.Errorf("ParseTaskSched(%q) (-want +got)\n%s", tc.in, diff)
		}
	}
}

func TestParseTaskSchedMigrations(t *testing.T) {
	sched := "cat (8740, #threads: 1)\n---------\nse.exec_start   :   14278481.410193\nse.nr_migrations                             :                    17\nnr_switches : 1\n"
	if n, ok := ParseTaskSchedMigrations([]byte(sched)); !ok || n != 17 {
		t.Errorf("ParseTaskSchedMigrations = %d, %v; want 17, true", n, ok)
	}
	for _, bad := range []string{"", "nr_switches : 1\n", "se.nr_migrations : x\n", "se.nr_migrations :\n"} {
		if n, ok := ParseTaskSchedMigrations([]byte(bad)); ok {
			t.Errorf("ParseTaskSchedMigrations(%q) = %d, true; want not found", bad, n)
		}
	}
}

func BenchmarkParseTaskSched(b *testing.B) {
	sched, err := os.ReadFile("/proc/self/sched")
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := ParseTaskSched(sched); !s.HasSwitches {
			b.Fatalf("no switch counts in\n%s", sched)
		}
	}
}

// BenchmarkParseTaskSchedstat parses a long-running thread's schedstat,
// which an unprivileged pass parses for every thread.
func BenchmarkParseTaskSchedstat(b *testing.B) {
	line := []byte("31538224166 4203518442 1190427\n")
	b.ReportAllocs()
	for b.Loop() {
		if s, err := ParseTaskSchedstat(line, "schedstat"); err != nil || s.Timeslices != 1190427 {
			b.Fatalf("got %+v, %v", s, err)
		}
	}
}
