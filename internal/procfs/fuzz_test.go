package procfs

import (
	"math"
	"testing"
)

// Every parser takes any bytes and returns a value or an error, never panics.

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("intr 1 2\nctxt 5\nprocs_running 1\nprocs_blocked 0\n"))
	f.Add([]byte("ctxt"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseStat(b, "stat") })
}

func FuzzParseInterrupts(f *testing.F) {
	f.Add([]byte("  CPU0 CPU1\n 0: 1 2 x\nRES: 3 4 y\nERR: 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var in Interrupts
		if err := ParseInterrupts(b, "interrupts", &in); err == nil {
			if len(in.PerCPU) != in.CPUs || len(in.ReschedPerCPU) != in.CPUs {
				t.Errorf("CPUs %d but %d per-CPU sums, %d RES columns", in.CPUs, len(in.PerCPU), len(in.ReschedPerCPU))
			}
		}
	})
}

func FuzzParsePressureCPUSome(f *testing.F) {
	f.Add([]byte("some avg10=0.31 avg60=2.20 avg300=0.96 total=19669245\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParsePressureCPUSome(b, "pressure/cpu")
		if err != nil && s != (PressureSome{}) {
			t.Errorf("error %v with a non-zero result %+v", err, s)
		}
		if err == nil && !s.HasTotal && s.Total != 0 {
			t.Errorf("total %d without HasTotal", s.Total)
		}
		if err == nil && (s.Avg10 < 0 || math.IsNaN(s.Avg10)) {
			t.Errorf("avg10 = %v", s.Avg10)
		}
	})
}

func FuzzParseLoadAvg(f *testing.F) {
	f.Add([]byte("0.00 0.02 0.00 1/85 5767\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseLoadAvg(b, "loadavg")
		if n, ok := ParseLoadAvgThreads(b); ok && (n < 0 || n > maxThreads) {
			t.Errorf("ParseLoadAvgThreads(%q) = %d", b, n)
		}
		_, _ = ParseLoadAvgLastPID(b, "loadavg")
	})
}

func FuzzParseTaskStatus(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTaskStatus(b, "status") })
}

func FuzzParseTaskSchedstat(f *testing.F) {
	for _, seed := range []string{"1 2 3\n", "18446744073709551615 18446744073709551616 1", " 1\t2  3x", "1 2\n3", "12a 1 1", "0001 2 3 4\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseTaskSchedstat(b, "schedstat")
		want, ok := parseSchedstatFields(b)
		if ok != (err == nil) || ok && got != (TaskSchedstat{RunNs: want[0], WaitNs: want[1], Timeslices: want[2]}) {
			t.Errorf("ParseTaskSchedstat(%q) = %+v, %v; the field reader gives %v, ok %v", b, got, err, want, ok)
		}
	})
}

// parseSchedstatFields reads schedstat with the generic field reader, the
// reference ParseTaskSchedstat's one loop must agree with.
func parseSchedstatFields(b []byte) (v [3]uint64, ok bool) {
	i := 0
	for k := range v {
		var f []byte
		f, i = nextField(b, i)
		if v[k], ok = parseUint(f); !ok {
			return v, false
		}
	}
	return v, true
}

func FuzzParseTaskStat(f *testing.F) {
	f.Add([]byte(statSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseTaskStat(b, "stat"); err == nil && s.LastCPU < 0 {
			t.Errorf("LastCPU = %d", s.LastCPU)
		}
	})
}

func FuzzParseTaskSched(f *testing.F) {
	f.Add([]byte("se.nr_migrations : 17\nnr_voluntary_switches : 3\nnr_involuntary_switches : 4\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := ParseTaskSched(b)
		if !s.HasSwitches && (s.VoluntarySwitches != 0 || s.InvoluntarySwitches != 0) || !s.HasMigrations && s.Migrations != 0 {
			t.Errorf("unset fields hold values: %+v", s)
		}
	})
}

func FuzzParseTaskSchedMigrations(f *testing.F) {
	f.Add([]byte("se.nr_migrations : 17\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTaskSchedMigrations(b) })
}

func FuzzParseWchan(f *testing.F) {
	f.Add([]byte("futex_wait_queue"))
	f.Add([]byte("0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWchan(b, "wchan")
		if err != nil {
			return
		}
		for _, c := range w {
			if c < ' ' || c > '~' {
				t.Errorf("wchan %q holds a byte that is not printable", w)
			}
		}
	})
}

func FuzzParseTaskStackTop(f *testing.F) {
	f.Add([]byte("[<0>] futex_do_wait+0x46/0x90\n[<0>] __futex_wait+0x8a/0x100\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseTaskStackTop(b, "stack")
		if err != nil {
			return
		}
		for _, c := range w {
			if c < ' ' || c > '~' {
				t.Errorf("function %q holds a byte that is not printable", w)
			}
		}
	})
}

func FuzzParseTaskSyscall(f *testing.F) {
	f.Add([]byte("202 0x1 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x46\n"))
	f.Add([]byte("running\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseTaskSyscall(b, "syscall"); err == nil && s.Number < -1 {
			t.Errorf("Number = %d", s.Number)
		}
	})
}

func FuzzParseFDTarget(f *testing.F) {
	f.Add("pipe:[1]")
	f.Add("anon_inode:[eventfd]")
	f.Fuzz(func(t *testing.T, s string) { _ = ParseFDTarget(s) })
}

func FuzzParseProcCgroupPath(f *testing.F) {
	f.Add([]byte("1:cpu:/a\n0::/b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, v1, err := ParseProcCgroupPath(b, "cgroup")
		if err != nil && (p != nil || v1) {
			t.Errorf("error %v with a path %q, v1 %v", err, p, v1)
		}
		if len(p) > 0 && p[0] != '/' {
			t.Errorf("path %q, not absolute", p)
		}
	})
}

func FuzzParseCgroupCPUStat(f *testing.F) {
	f.Add([]byte("nr_periods 1\nnr_throttled 1\nthrottled_usec 5\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseCgroupCPUStat(b, "cpu.stat") })
}

func FuzzParseCPUMax(f *testing.F) {
	f.Add([]byte("max 100000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := ParseCPUMax(b, "cpu.max"); err == nil && (l.PeriodUs <= 0 || l.CPUs() < 0) {
			t.Errorf("limit %+v", l)
		}
	})
}

func FuzzParseCFSValue(f *testing.F) {
	f.Add([]byte("-1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := ParseCFSValue(b, "cfs"); err == nil && v < -1 {
			t.Errorf("value %d", v)
		}
	})
}

func FuzzParseCgroupMounts(f *testing.F) {
	f.Add([]byte("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseCgroupMounts(b, "mountinfo") })
}
