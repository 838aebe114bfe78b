package load

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0,1", []int{0, 1}},
		{"1,0", []int{1, 0}}, // order kept: ping on 1, pong on 0
		{"0-1", []int{0, 1}},
		{"0,2", []int{0, 2}},
		{"0-2,5", []int{0, 1, 2, 5}},
		{" 3 ", []int{3}},
		{"7-7", []int{7}},
		{"1023", []int{1023}},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if err != nil {
			t.Errorf("ParseCPUList(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCPUList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseCPUListErrors(t *testing.T) {
	for _, in := range []string{"", " ", "x", "-1", "1-", "-", "2-1", "0,,1", "0,", ",0", "1024", "0-1024", "0x1", "+1", "1.5", "99999999999", "0 1", "٣"} {
		got, err := ParseCPUList(in)
		if !errors.Is(err, ErrCPUList) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want ErrCPUList", in, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseCPUList(%q) error spans lines: %q", in, err)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0,1", "0-1", "0,2-3", "", "x", "2-1", "1023", "0-1023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			if cpus != nil {
				t.Errorf("ParseCPUList(%q) returned CPUs with an error", s)
			}
			return
		}
		if len(cpus) == 0 || len(cpus) > maxCPU {
			t.Errorf("ParseCPUList(%q) = %d CPUs", s, len(cpus))
		}
		for _, c := range cpus {
			if c < 0 || c >= maxCPU {
				t.Errorf("ParseCPUList(%q) holds CPU %d", s, c)
			}
		}
		// What FormatCPUs writes must read back the same, sorted lists at least.
		if sorted(cpus) {
			back, err := ParseCPUList(FormatCPUs(cpus))
			if err != nil || !cmp.Equal(cpus, back) {
				t.Errorf("ParseCPUList(FormatCPUs(%v)) = %v, %v", cpus, back, err)
			}
		}
	})
}

func sorted(s []int) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

func TestFormatCPUs(t *testing.T) {
	tests := map[string][]int{"0": {0}, "0-1": {0, 1}, "0-2,5,7-8": {0, 1, 2, 5, 7, 8}, "": nil}
	for want, in := range tests {
		if got := FormatCPUs(in); got != want {
			t.Errorf("FormatCPUs(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateCPUs(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) == 0 {
		t.Fatal("no allowed CPUs")
	}
	a := allowed[0]
	for _, ok := range [][]int{nil, {a}, {a, a}} {
		if err := ValidateCPUs(ok); err != nil {
			t.Errorf("ValidateCPUs(%v): %v", ok, err)
		}
	}
	if len(allowed) >= 2 {
		if err := ValidateCPUs([]int{allowed[1], allowed[0]}); err != nil {
			t.Errorf("ValidateCPUs(two allowed): %v", err)
		}
	}
	for _, bad := range [][]int{{maxCPU - 1}, {a, maxCPU - 1}, {a, a, a}} {
		err := ValidateCPUs(bad)
		if err == nil {
			t.Errorf("ValidateCPUs(%v) accepted CPUs this process cannot use", bad)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("ValidateCPUs(%v) error spans lines: %q", bad, err)
		}
	}
}
