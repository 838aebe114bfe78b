package waketrace

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// percpuSpec is kernel BTF whose per-CPU section holds vars at offsets.
func percpuSpec(t *testing.T, vars map[string]uint32) *btf.Spec {
	t.Helper()
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	base := &btf.Struct{Name: "timer_base", Size: 64}
	sec := &btf.Datasec{Name: percpuSection}
	for name, off := range vars {
		var typ btf.Type = i32
		size := uint32(4)
		if name == "timer_bases" {
			typ, size = &btf.Array{Index: i32, Type: base, Nelems: 3}, 192
		}
		sec.Vars = append(sec.Vars, btf.VarSecinfo{Type: &btf.Var{Name: name, Type: typ, Linkage: btf.GlobalVar}, Offset: off, Size: size})
	}
	sec.Size = 1 << 16
	b, err := btf.NewBuilder([]btf.Type{sec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestReadPerCPULayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]uint32
		want perCPULayout
	}{
		// As on x86-64 6.18: the count and the timers before the run queue.
		{"x86", map[string]uint32{"__preempt_count": 86064, "hrtimer_bases": 115072, "timer_bases": 100864, "runqueues": 178816},
			perCPULayout{preemptCount: 86064 - 178816, hrtimerBases: 115072 - 178816, timerBases: 100864 - 178816, timerBasesN: 3}},
		{"no timers", map[string]uint32{"__preempt_count": 64, "runqueues": 4096}, perCPULayout{preemptCount: 64 - 4096}},
		// arm64 and others keep the count in the task: none here.
		{"no per-CPU preempt count", map[string]uint32{"runqueues": 4096, "hrtimer_bases": 64}, perCPULayout{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readPerCPULayout(percpuSpec(t, tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(perCPULayout{})); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWakerKeys: the pair map's waker keys become threads, the idle task
// (whichever CPU's) or the interrupt pseudo-wakers, with no thread ID for
// the latter.
func TestWakerKeys(t *testing.T) {
	name := func(s string) *[16]int8 {
		var c [16]int8
		for i := range len(s) {
			c[i] = int8(s[i])
		}
		return &c
	}
	type waker struct {
		PID, TID int
		Comm     string
	}
	for _, tc := range []struct {
		key, pid uint32
		comm     string
		want     waker
	}{
		{4243, 4242, "pp-ping", waker{4242, 4243, "pp-ping"}},
		{keyIdle | 1, 0, "swapper/1", waker{0, 0, "swapper/1"}},
		{keyIRQ, keyIRQ, "", waker{model.WakerIRQ, model.WakerIRQ, "irq"}},
		{keySoftIRQ, keySoftIRQ, "", waker{model.WakerSoftIRQ, model.WakerSoftIRQ, "softirq"}},
		{keyTimer, keyTimer, "", waker{model.WakerTimer, model.WakerTimer, "timer"}},
	} {
		var got waker
		got.PID, got.TID, got.Comm = wakerOf(tc.key, tc.pid, name(tc.comm))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("key %#x (-want +got):\n%s", tc.key, diff)
		}
	}
}
