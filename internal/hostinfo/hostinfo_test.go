package hostinfo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// The facts of this host, checked against the kernel's own answers.
func TestReadThisHost(t *testing.T) {
	f := Read(context.Background(), "")
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unix.ByteSliceToString(u.Release[:]), f.Kernel); diff != "" {
		t.Errorf("kernel (-uname +got)\n%s", diff)
	}
	if diff := cmp.Diff(unix.ByteSliceToString(u.Nodename[:]), f.Hostname); diff != "" {
		t.Errorf("host name (-uname +got)\n%s", diff)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	if f.CPUs < set.Count() {
		t.Errorf("%d CPUs, fewer than the %d this process may use", f.CPUs, set.Count())
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	if want := uint64(si.Totalram) * uint64(si.Unit); f.MemTotal != want {
		t.Errorf("memory %d bytes, sysinfo says %d", f.MemTotal, want)
	}
	up := f.Uptime(time.Now())
	if d := up - time.Duration(si.Uptime)*time.Second; d < -2*time.Second || d > 2*time.Second {
		t.Errorf("uptime %v, sysinfo says %ds", up, si.Uptime)
	}
}

// A procfs tree that says odd things cannot put escape sequences on screen.
func TestReadSanitizesAndHonoursRoot(t *testing.T) {
	root := t.TempDir()
	cpuinfo := "processor\t: 0\nmodel name\t: Evil\x1b[2J  CPU\n\nprocessor\t: 1\nmodel name\t: Evil\x1b[2J  CPU\n"
	if err := os.WriteFile(filepath.Join(root, "cpuinfo"), []byte(cpuinfo), 0o644); err != nil {
		t.Fatal(err)
	}
	f := Read(context.Background(), root)
	if strings.ContainsRune(f.CPUModel, 0x1b) || !strings.Contains(f.CPUModel, "Evil") {
		t.Errorf("CPU model %q: want the tree's model, without the escape", f.CPUModel)
	}
}

func TestSummary(t *testing.T) {
	boot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := Facts{Hostname: "db-7", Kernel: "6.18.0", CPUModel: "Xeon", CPUs: 2, BootTime: boot, MemTotal: 8 << 30}
	got := f.Summary(boot.Add(3*24*time.Hour + 4*time.Hour + 5*time.Minute))
	if diff := cmp.Diff("db-7  Linux 6.18.0  2 × Xeon  8.0 GiB  up 3d 4h", got); diff != "" {
		t.Errorf("summary (-want +got)\n%s", diff)
	}
	if got := (Facts{}).Summary(boot); got != "" {
		t.Errorf("no facts: %q", got)
	}
}

// A FIFO where cpuinfo should be must not hang the read.
func TestReadSkipsFIFOs(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"cpuinfo", "meminfo", "stat"} {
		if err := unix.Mkfifo(filepath.Join(root, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	f := Read(context.Background(), root)
	if d := time.Since(start); d > readTimeout/2 {
		t.Errorf("Read took %v with FIFOs in the tree", d)
	}
	if f.CPUModel != "" || f.MemTotal != 0 || f.Kernel == "" {
		t.Errorf("facts %+v: want the kernel, nothing from the FIFOs", f)
	}
}
