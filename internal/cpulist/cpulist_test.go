package cpulist

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
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
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", " ", "x", "-1", "1-", "-", "2-1", "0,,1", "0,", ",0", "1024", "0-1024", "0x1", "+1", "1.5", "99999999999", "0 1", "٣"} {
		got, err := Parse(in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, %v; want ErrSyntax", in, got, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error spans lines: %q", in, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "0,1", "0-1", "0,2-3", "", "x", "2-1", "1023", "0-1023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := Parse(s)
		if err != nil {
			if cpus != nil {
				t.Errorf("Parse(%q) returned CPUs with an error", s)
			}
			return
		}
		if len(cpus) == 0 || len(cpus) > Max {
			t.Errorf("Parse(%q) = %d CPUs", s, len(cpus))
		}
		for _, c := range cpus {
			if c < 0 || c >= Max {
				t.Errorf("Parse(%q) holds CPU %d", s, c)
			}
		}
		// What FormatCPUs writes must read back the same, sorted lists at least.
		if sorted(cpus) {
			back, err := Parse(Format(cpus))
			if err != nil || !cmp.Equal(cpus, back) {
				t.Errorf("Parse(Format(%v)) = %v, %v", cpus, back, err)
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

func TestFormat(t *testing.T) {
	tests := map[string][]int{"0": {0}, "0-1": {0, 1}, "0-2,5,7-8": {0, 1, 2, 5, 7, 8}, "": nil}
	for want, in := range tests {
		if got := Format(in); got != want {
			t.Errorf("Format(%v) = %q, want %q", in, got, want)
		}
	}
}
