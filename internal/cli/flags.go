package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// delayValue accepts what top, vmstat and pidstat users type: plain seconds
// ("2", "0.5") or a Go duration ("500ms", "2s").
type delayValue time.Duration

func (d *delayValue) String() string { return time.Duration(*d).String() }
func (d *delayValue) Type() string   { return "duration" }

func (d *delayValue) Set(s string) error {
	v, err := parseDelay(s)
	if err != nil {
		return err
	}
	*d = delayValue(v)
	return nil
}

const minDelay = 100 * time.Millisecond

func parseDelay(s string) (time.Duration, error) {
	var v time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f > 1e6 || f != f {
			return 0, errors.New("too long")
		}
		v = time.Duration(f * float64(time.Second))
	} else if v, err = time.ParseDuration(s); err != nil {
		return 0, errors.New("want seconds (2, 0.5) or a duration (500ms)")
	}
	if v < minDelay {
		return 0, fmt.Errorf("must be at least %v", minDelay)
	}
	return v, nil
}

// pidListValue is a comma-separated list of PIDs, as pidstat -p takes them.
type pidListValue []int

func (p *pidListValue) String() string {
	s := make([]string, len(*p))
	for i, v := range *p {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}
func (p *pidListValue) Type() string { return "pids" }

func (p *pidListValue) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return fmt.Errorf("%q is not a PID", f)
		}
		*p = append(*p, v)
	}
	return nil
}

// outputValue is text or json.
type outputValue string

func (o *outputValue) String() string { return string(*o) }
func (o *outputValue) Type() string   { return "text|json" }

func (o *outputValue) Set(s string) error {
	switch s {
	case "text", "json":
		*o = outputValue(s)
		return nil
	}
	return errors.New("want text or json")
}
