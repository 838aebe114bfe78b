package bpfutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// caps returns a Capget that reports the capabilities given as effective.
func caps(cs ...uint) func(*unix.CapUserHeader, *unix.CapUserData) error {
	return func(_ *unix.CapUserHeader, d *unix.CapUserData) error {
		data := unsafe.Slice(d, 2)
		for _, c := range cs {
			data[c/32].Effective |= 1 << (c % 32)
		}
		return nil
	}
}

func TestCheck(t *testing.T) {
	btf := filepath.Join(t.TempDir(), "vmlinux")
	if err := os.WriteFile(btf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noBTF := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		name string
		n    Needs
		want string // a part of the message; "" for nil
	}{
		{"root", Needs{BTF: btf, Capget: caps(capSysAdmin)}, ""},
		{"bpf and perfmon", Needs{BTF: btf, Capget: caps(capBPF, capPerfmon)}, ""},
		{"bpf alone", Needs{BTF: btf, Capget: caps(capBPF)}, "needs root, or CAP_BPF and CAP_PERFMON"},
		{"none", Needs{BTF: btf, Capget: caps()}, "needs root, or CAP_BPF and CAP_PERFMON"},
		{"no BTF", Needs{BTF: noBTF, Capget: caps(capSysAdmin)}, "CONFIG_DEBUG_INFO_BTF=y"},
		// Root's user ID is no promise of its capabilities: the reason
		// is the error, whoever runs it.
		{"capget fails", Needs{BTF: btf, Capget: func(*unix.CapUserHeader, *unix.CapUserData) error { return unix.EINVAL }},
			"reading this process's capabilities: invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.n.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check = %v, want a message with %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("Check = %q, want one line", err)
			}
		})
	}
}

func TestPrepareChecksFirst(t *testing.T) {
	err := Needs{BTF: filepath.Join(t.TempDir(), "none"), Capget: caps(capSysAdmin)}.Prepare()
	if err == nil || !strings.Contains(err.Error(), "BTF") {
		t.Errorf("Prepare without BTF = %v, want the BTF reason", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	if _, err := os.Stat(BTFPath); err != nil {
		return
	}
	if err := Host().Prepare(); err != nil {
		t.Errorf("Prepare as root = %v", err)
	}
}
