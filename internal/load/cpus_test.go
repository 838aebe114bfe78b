package load

import (
	"strings"
	"testing"
)

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
