package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// TestOutputFormatsListedAsAccepted: every -o lists, in its help, its
// type and its completions, exactly the formats it accepts, and refuses
// the rest in one line (load -o folded printed text).
func TestOutputFormatsListedAsAccepted(t *testing.T) {
	root := newRootCmd()
	find := func(name string) *cobra.Command {
		if name == "" {
			return newRootCmd()
		}
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	candidates := []string{"text", "json", "folded", "markdown", "csv"}
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"", []string{"text", "json", "folded"}},
		{"replay", []string{"text", "json", "folded"}},
		{"load", []string{"text", "json"}},
		{"bench", []string{"text", "json", "markdown"}},
	} {
		c := find(tc.cmd)
		f := c.Flags().Lookup("output")
		if f == nil {
			t.Fatalf("%q has no -o", tc.cmd)
		}
		var accepted []string
		for _, v := range candidates {
			if err := c.Flags().Set("output", v); err == nil {
				accepted = append(accepted, v)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("%q -o %s: a message of more than one line: %q", tc.cmd, v, err)
			}
		}
		if diff := cmp.Diff(tc.want, accepted); diff != "" {
			t.Errorf("%q -o accepts (-want +got):\n%s", tc.cmd, diff)
		}
		if diff := cmp.Diff(strings.Join(tc.want, "|"), f.Value.Type()); diff != "" {
			t.Errorf("%q -o type (-want +got):\n%s", tc.cmd, diff)
		}
		word := regexp.MustCompile(`\b(` + strings.Join(candidates, "|") + `)\b`)
		listed := map[string]bool{}
		for _, w := range word.FindAllString(f.Usage, -1) {
			listed[w] = true
		}
		var named []string
		for _, v := range candidates {
			if listed[v] {
				named = append(named, v)
			}
		}
		if diff := cmp.Diff(tc.want, named); diff != "" {
			t.Errorf("%q -o help %q names (-want +got):\n%s", tc.cmd, f.Usage, diff)
		}
		complete, ok := c.GetFlagCompletionFunc("output")
		if !ok {
			t.Errorf("%q -o has no completions", tc.cmd)
			continue
		}
		got, _ := complete(c, nil, "")
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q -o completes (-want +got):\n%s", tc.cmd, diff)
		}
	}
}

// TestMaxSizeHelpSaysNoLimit: record --help gives --max-size's default
// as what it means, not "0 B", a size --max-size refuses.
func TestMaxSizeHelpSaysNoLimit(t *testing.T) {
	usage := newRecordCmd().Flags().FlagUsages()
	var line string
	for _, l := range strings.Split(usage, "\n") {
		if strings.Contains(l, "--max-size size") {
			line = l
		}
	}
	if !strings.Contains(line, "(default: no limit)") || strings.Contains(line, "0 B") {
		t.Errorf("--max-size help: %q, want its default said as no limit", line)
	}
}
