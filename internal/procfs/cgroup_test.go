package procfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcCgroupPath(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantV1  bool
		wantErr bool
	}{
		{"v2", "0::/system.slice/nginx.service\n", "/system.slice/nginx.service", false, false},
		{"v1", "12:pids:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n", "/docker/abc", true, false},
		{"hybrid: v1 cpu wins", "9:name=systemd:/\n2:cpuacct:/\n1:cpu:/ctxtop-x\n0::/user.slice\n", "/ctxtop-x", true, false},
		{"v1 root loses to v2", "0::/u\n1:cpu:/\n", "/u", false, false},
		{"v1 root alone", "1:cpu,cpuacct:/\n", "/", true, false},
		{"colon in path", "0::/a:b\n", "/a:b", false, false},
		{"cpuacct is not cpu", "3:cpuacct:/x\n", "", false, false},
		{"no cpu, no v2", "3:memory:/m\n", "", false, false},
		{"no path", "0::\n", "", false, true},
		{"relative path", "0::x\n", "", false, true},
		{"one colon", "0:/x\n", "", false, true},
		{"bad id", "a::/x\n", "", false, true},
		{"not a cgroup file", "x", "", false, true},
		{"empty", "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, v1, err := ParseProcCgroupPath([]byte(tt.in), "cgroup")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if string(got) != tt.want || v1 != tt.wantV1 {
				t.Errorf("got %q, v1 %v; want %q, v1 %v", got, v1, tt.want, tt.wantV1)
			}
		})
	}
	b := []byte("12:pids:/a\n4:cpu,cpuacct:/docker/x\n0::/y\n")
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseProcCgroupPath(b, "cgroup") }); n != 0 {
		t.Errorf("ParseProcCgroupPath allocates %v times", n)
	}
}

func TestParseCgroupCPUStat(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    CgroupCPUStat
		wantErr bool
	}{
		{"v2", "usage_usec 8134225\nuser_usec 6551081\nsystem_usec 1583144\nnr_periods 412\nnr_throttled 187\nthrottled_usec 9329411\nnr_bursts 0\nburst_usec 0\n",
			CgroupCPUStat{Periods: 412, Throttled: 187, ThrottledNs: 9329411000, HasThrottling: true}, false},
		{"v2 without the cpu controller", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n", CgroupCPUStat{}, false},
		{"v1", "nr_periods 10\nnr_throttled 4\nthrottled_time 123456789\nnr_bursts 0\nburst_time 0\n",
			CgroupCPUStat{Periods: 10, Throttled: 4, ThrottledNs: 123456789, HasThrottling: true}, false},
		{"bad value", "nr_periods x\n", CgroupCPUStat{}, true},
		{"overflow in µs", "throttled_usec 18446744073709551615\n", CgroupCPUStat{}, true},
		{"nothing known", "foo 1\n", CgroupCPUStat{}, true},
		{"empty", "", CgroupCPUStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCgroupCPUStat([]byte(tt.in), "cpu.stat")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseCPULimits(t *testing.T) {
	max := []struct {
		in      string
		want    CPULimit
		wantErr bool
	}{
		{"max 100000\n", CPULimit{QuotaUs: -1, PeriodUs: 100000}, false},
		{"50000 100000\n", CPULimit{QuotaUs: 50000, PeriodUs: 100000}, false},
		{"50000\n", CPULimit{}, true},
		{"max 0\n", CPULimit{}, true},
		{"-5 100000\n", CPULimit{}, true},
		{"", CPULimit{}, true},
	}
	for _, tt := range max {
		got, err := ParseCPUMax([]byte(tt.in), "cpu.max")
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseCPUMax(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCPUMax(%q) (-want +got)\n%s", tt.in, diff)
		}
	}
	if got := (CPULimit{QuotaUs: 50000, PeriodUs: 100000}).CPUs(); got != 0.5 {
		t.Errorf("CPUs() = %v, want 0.5", got)
	}
	if got := (CPULimit{QuotaUs: -1, PeriodUs: 100000}).CPUs(); got != 0 {
		t.Errorf("unlimited CPUs() = %v, want 0", got)
	}
	cfs := []struct {
		in      string
		want    int64
		wantErr bool
	}{{"-1\n", -1, false}, {"50000\n", 50000, false}, {"x\n", 0, true}, {"", 0, true}, {"-2\n", 0, true}}
	for _, tt := range cfs {
		got, err := ParseCFSValue([]byte(tt.in), "cpu.cfs_quota_us")
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseCFSValue(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseCgroupMounts(t *testing.T) {
	const hybrid = `23 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
`
	tests := []struct {
		name    string
		in      string
		want    CgroupFS
		wantErr bool
	}{
		{"hybrid", hybrid, CgroupFS{V2: "/sys/fs/cgroup/unified", V2Root: "/", CPU: "/sys/fs/cgroup/cpu", CPURoot: "/"}, false},
		{"v2 only", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n", CgroupFS{V2: "/sys/fs/cgroup", V2Root: "/"}, false},
		{"v1 cpu,cpuacct in a container", "50 40 0:30 /kubepods/pod1 /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n",
			CgroupFS{CPU: "/sys/fs/cgroup/cpu,cpuacct", CPURoot: "/kubepods/pod1"}, false},
		{"escaped blank", `30 23 0:26 / /mnt/my\040cg rw - cgroup2 none rw` + "\n", CgroupFS{V2: "/mnt/my cg", V2Root: "/"}, false},
		{"none", "23 1 0:21 / /sys rw - sysfs sysfs rw\n", CgroupFS{}, false},
		{"truncated cgroup line", "30 - cgroup2 cgroup2 rw\n", CgroupFS{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCgroupMounts([]byte(tt.in), "mountinfo")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestCgroupDir(t *testing.T) {
	c := CgroupFS{V2: "/cg/unified", V2Root: "/", CPU: "/cg/cpu", CPURoot: "/kubepods"}
	tests := []struct {
		path string
		v1   bool
		want string
		ok   bool
	}{
		{"/system.slice/a.service", false, "/cg/unified/system.slice/a.service", true},
		{"/kubepods/pod1/c1", true, "/cg/cpu/pod1/c1", true},
		{"/kubepods", true, "/cg/cpu", true},
		{"/other", true, "", false},
		{"/a/../../etc", false, "", false},
		{"relative", false, "", false},
	}
	for _, tt := range tests {
		got, err := c.Dir(tt.path, tt.v1)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Dir(%q, %v) = %q, %v; want %q, ok %v", tt.path, tt.v1, got, err, tt.want, tt.ok)
		}
	}
	if _, err := (CgroupFS{}).Dir("/x", false); err == nil {
		t.Error("Dir with nothing mounted: no error")
	}
}

// A FIFO or a device in a fixture tree where a cgroup's limit file should
// be is refused at once, never waited on or read without end. (The sampler
// reads the other cgroup and wait files itself: see its hostile tests.)
func TestCgroupLimitReaderRefusesNonRegularFiles(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "cpu.cfs_quota_us"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (CgroupFS{}).CPULimit(root, true); err == nil {
		t.Error("CPULimit on a FIFO: no error")
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := os.Symlink("/dev/zero", filepath.Join(root, "cpu.max")); err != nil {
			t.Fatal(err)
		}
		if _, err := (CgroupFS{}).CPULimit(root, false); err == nil {
			t.Error("CPULimit on /dev/zero: no error")
		}
	}
}

func TestCgroupMountsAgainstLiveProc(t *testing.T) {
	fs, err := NewFS("/proc")
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	if _, err := fs.CgroupMounts(); err != nil {
		t.Errorf("CgroupMounts(): %v", err)
	}
}
