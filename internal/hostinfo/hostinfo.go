// Package hostinfo reads the facts about the host that frame every figure:
// its name, kernel, CPU model and count, boot time and memory. They come
// from gopsutil, read once at start; none of them is on the per-tick path.
package hostinfo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// Facts describe the host. A fact that could not be read is zero.
type Facts struct {
	Hostname string
	Kernel   string
	CPUModel string
	// CPUs is the number of logical CPUs.
	CPUs     int
	BootTime time.Time
	// MemTotal is the RAM in bytes.
	MemTotal uint64
}

// readTimeout bounds Read: a --proc tree is untrusted, and a read that
// hangs must not hold up the monitor.
const readTimeout = 2 * time.Second

// Read gathers the facts; procRoot is the procfs they are read from ("" or
// "/proc" for this host's). Each string passes through sanitize.Name: a CPU
// model is whatever the kernel (or a copied tree) says. From another tree,
// only its regular files are read, and not its boot time, which gopsutil
// works out from many more files and which means little for a copy. Read
// returns within readTimeout whatever happens to a read.
func Read(ctx context.Context, procRoot string) Facts {
	done := make(chan Facts, 1)
	go func() { done <- read(ctx, procRoot) }()
	select {
	case f := <-done:
		return f
	case <-time.After(readTimeout):
		// The read goroutine may stay blocked; the facts that need no file
		// still come through.
		var f Facts
		f.Hostname, _ = os.Hostname()
		f.Kernel, _ = host.KernelVersionWithContext(ctx)
		f.Hostname, f.Kernel = sanitize.Name(f.Hostname), sanitize.Name(f.Kernel)
		return f
	}
}

func read(ctx context.Context, procRoot string) Facts {
	own := procRoot == "" || filepath.Clean(procRoot) == "/proc"
	if !own {
		ctx = context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: procRoot})
	}
	// regular says whether the tree's file may be read: a FIFO or a device
	// in a copied tree would block or never end.
	regular := func(name string) bool {
		if own {
			return true
		}
		fi, err := os.Stat(filepath.Join(procRoot, name))
		return err == nil && fi.Mode().IsRegular()
	}
	var f Facts
	f.Hostname, _ = os.Hostname()
	f.Kernel, _ = host.KernelVersionWithContext(ctx)
	if regular("cpuinfo") {
		if infos, err := cpu.InfoWithContext(ctx); err == nil && len(infos) > 0 {
			f.CPUModel = strings.Join(strings.Fields(infos[0].ModelName), " ")
		}
	}
	if regular("cpuinfo") && regular("stat") {
		f.CPUs, _ = cpu.CountsWithContext(ctx, true)
	}
	if own {
		if bt, err := host.BootTimeWithContext(ctx); err == nil && bt > 0 {
			f.BootTime = time.Unix(int64(bt), 0)
		}
	}
	if regular("meminfo") {
		if vm, err := mem.VirtualMemoryWithContext(ctx); err == nil {
			f.MemTotal = vm.Total
		}
	}
	f.Hostname, f.Kernel, f.CPUModel = sanitize.Name(f.Hostname), sanitize.Name(f.Kernel), sanitize.Name(f.CPUModel)
	return f
}

// Uptime is the time since boot at now; 0 when the boot time is unknown.
func (f Facts) Uptime(now time.Time) time.Duration {
	if f.BootTime.IsZero() || now.Before(f.BootTime) {
		return 0
	}
	return now.Sub(f.BootTime)
}

// Summary is one line for `ctxtop version` and logs:
// "db-7  Linux 6.18.0  2 × Intel Xeon  7.8 GiB  up 3d 4h".
func (f Facts) Summary(now time.Time) string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(f.Hostname)
	if f.Kernel != "" {
		add("Linux " + f.Kernel)
	}
	add(f.CPUText())
	add(f.MemText())
	if u := f.Uptime(now); u > 0 {
		add("up " + FormatUptime(u))
	}
	return strings.Join(parts, "  ")
}

// CPUText is "2 × Intel Xeon ..." or "2 CPUs" without a model.
func (f Facts) CPUText() string {
	switch {
	case f.CPUs > 0 && f.CPUModel != "":
		return fmt.Sprintf("%d × %s", f.CPUs, f.CPUModel)
	case f.CPUs > 0:
		return fmt.Sprintf("%d CPUs", f.CPUs)
	}
	return f.CPUModel
}

// MemText is the RAM in GiB, "" when unknown.
func (f Facts) MemText() string {
	if f.MemTotal == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB", float64(f.MemTotal)/(1<<30))
}

// FormatUptime is uptime as top shows it, to the minute: "3d 4h", "4h 12m", "12m".
func FormatUptime(d time.Duration) string {
	d = d.Truncate(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d/time.Hour)%24, int(d/time.Minute)%60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh %dm", hours, mins)
	}
	return fmt.Sprintf("%dm", mins)
}
