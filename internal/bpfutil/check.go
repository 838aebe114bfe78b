package bpfutil

import (
	"fmt"
	"os"
	"sync"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// BTFPath is where the kernel publishes its own type information, which
// every program's CO-RE relocations and BTF attachment need.
const BTFPath = "/sys/kernel/btf/vmlinux"

// Linux capability numbers golang.org/x/sys does not name on every release.
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// Needs is what a tracer needs of the host, so a test can pretend the
// host lacks it: where the kernel's BTF is, and how the effective
// capabilities are read.
type Needs struct {
	BTF    string
	Capget func(*unix.CapUserHeader, *unix.CapUserData) error
}

// Host is this host's kernel BTF and capabilities.
func Host() Needs { return Needs{BTF: BTFPath, Capget: unix.Capget} }

// Check reports, without loading anything, why no program can run here:
// no kernel BTF, or neither root (CAP_SYS_ADMIN) nor CAP_BPF with
// CAP_PERFMON. Its message is one line saying what is missing and how to
// get it, for the caller to wrap in its own ErrUnavailable. When the
// capabilities cannot be read, the reason is the error: guessing from
// the user ID would promise a load that the kernel may refuse with a
// message far less clear. nil does not promise a load succeeds (an old
// kernel may still refuse a program).
func (n Needs) Check() error {
	if _, err := os.Stat(n.BTF); err != nil {
		return fmt.Errorf("the kernel has no BTF (%s); it needs Linux 5.5 or later built with CONFIG_DEBUG_INFO_BTF=y", BTFPath)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := n.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading this process's capabilities: %v", err)
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	if !has(capSysAdmin) && !(has(capBPF) && has(capPerfmon)) {
		return fmt.Errorf("needs root, or CAP_BPF and CAP_PERFMON (sudo ctxtop, or setcap cap_bpf,cap_perfmon+ep on the binary)")
	}
	return nil
}

// Prepare is what every tracer's Open does before it loads anything:
// Check, then lifting RLIMIT_MEMLOCK, which kernels before 5.11 charge
// BPF maps to (on later ones it does nothing). A failure there is
// reported: the maps would not load, with a less clear message.
func (n Needs) Prepare() error {
	if err := n.Check(); err != nil {
		return err
	}
	return removeMemlock()
}

// removeMemlock lifts the limit once per process, however many tracers
// open, and keeps what it said.
var removeMemlock = sync.OnceValue(func() error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("lifting the locked-memory limit for BPF maps: %v", err)
	}
	return nil
})
