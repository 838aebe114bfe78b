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

func FuzzParsePressureCPU(f *testing.F) {
	f.Add([]byte("some avg10=0.31 avg60=2.20 avg300=0.96 total=1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := ParsePressureCPU(b, "pressure/cpu"); err == nil && (v < 0 || math.IsNaN(v)) {
			t.Errorf("avg10 = %v", v)
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
	})
}

func FuzzParseLoadAvg(f *testing.F) {
	f.Add([]byte("0.00 0.02 0.00 1/85 5767\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseLoadAvg(b, "loadavg") })
}

func FuzzParseTaskStatus(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTaskStatus(b, "status") })
}

func FuzzParseTaskSchedstat(f *testing.F) {
	f.Add([]byte("1 2 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTaskSchedstat(b, "schedstat") })
}

func FuzzParseTaskStat(f *testing.F) {
	f.Add([]byte(statSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseTaskStat(b, "stat"); err == nil && s.LastCPU < 0 {
			t.Errorf("LastCPU = %d", s.LastCPU)
		}
	})
}

func FuzzParseTaskSchedMigrations(f *testing.F) {
	f.Add([]byte("se.nr_migrations : 17\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTaskSchedMigrations(b) })
}
