package load

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const statusSample = `Name:	ping-futex
State:	S (sleeping)
Tgid:	100
Pid:	101
Threads:	5
voluntary_ctxt_switches:	12345
nonvoluntary_ctxt_switches:	67
`

func TestParseStatusSwitches(t *testing.T) {
	got, err := parseStatusSwitches([]byte(statusSample))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Counters{Voluntary: 12345, Involuntary: 67}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"",
		"Name:\tx\n",
		"voluntary_ctxt_switches:\t1\n",
		"voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t1\n",
		"voluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t1\n",
	} {
		if _, err := parseStatusSwitches([]byte(bad)); !errors.Is(err, ErrParse) {
			t.Errorf("parseStatusSwitches(%q) = %v, want ErrParse", bad, err)
		}
	}
}

func TestParseSchedMigrations(t *testing.T) {
	sched := "cat (8740, #threads: 1)\n---------\nse.exec_start   :   14278481.410193\nse.nr_migrations                             :                    17\nnr_switches : 1\n"
	if n, ok := parseSchedMigrations([]byte(sched)); !ok || n != 17 {
		t.Errorf("parseSchedMigrations = %d, %v; want 17, true", n, ok)
	}
	for _, bad := range []string{"", "nr_switches : 1\n", "se.nr_migrations : x\n"} {
		if n, ok := parseSchedMigrations([]byte(bad)); ok {
			t.Errorf("parseSchedMigrations(%q) = %d, true; want not found", bad, n)
		}
	}
}

func FuzzParseStatusSwitches(f *testing.F) {
	f.Add([]byte(statusSample))
	f.Add([]byte("voluntary_ctxt_switches:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseStatusSwitches(b)
		if err != nil && c != (Counters{}) {
			t.Errorf("counters %v returned with an error", c)
		}
		parseSchedMigrations(b)
	})
}

func TestReadCountersSelf(t *testing.T) {
	c0, err := readSelfCounters()
	if err != nil {
		t.Fatal(err)
	}
	c1, err := readSelfCounters()
	if err != nil {
		t.Fatal(err)
	}
	if c1.Voluntary < c0.Voluntary || c1.Involuntary < c0.Involuntary {
		t.Errorf("counters went backwards: %+v then %+v", c0, c1)
	}
}
