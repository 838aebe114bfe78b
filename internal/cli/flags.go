package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ctxtop/ctxtop/internal/output"
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
	v, err := parseDuration(s)
	if err != nil {
		return 0, err
	}
	if v < minDelay {
		return 0, fmt.Errorf("must be at least %v", minDelay)
	}
	return v, nil
}

// maxDuration keeps a typo like 1e9 from overflowing into a negative time.
const maxDuration = 1e6 * time.Second

// parseDuration is the one parser behind every time flag: plain seconds
// ("2", "0.5") or a Go duration ("500ms", "2s"), never negative.
func parseDuration(s string) (time.Duration, error) {
	var v time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f != f || f > maxDuration.Seconds() || f < -maxDuration.Seconds() {
			return 0, errors.New("too long")
		}
		v = time.Duration(f * float64(time.Second))
	} else if v, err = time.ParseDuration(s); err != nil {
		return 0, errors.New("want seconds (2, 0.5) or a duration (500ms)")
	}
	if v < 0 {
		return 0, errors.New("must not be negative")
	}
	if v > maxDuration {
		return 0, errors.New("too long")
	}
	return v, nil
}

// durationValue is a time flag that takes what -d takes: seconds or a
// duration.
type durationValue time.Duration

// String is "0" for zero, which help then shows as no default, as it does
// for pflag's own durations.
func (d *durationValue) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

func (d *durationValue) Type() string { return "duration" }

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// flagError turns pflag's "invalid argument" errors into one line that
// names the flag and what it wants, without the strconv wording of the
// library underneath.
func flagError(_ *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	f := bad.GetFlag()
	name := "--" + f.Name
	if f.Shorthand != "" {
		name = "-" + f.Shorthand + "/--" + f.Name
	}
	cause := errors.Unwrap(bad)
	var num *strconv.NumError
	if errors.As(cause, &num) {
		switch {
		case errors.Is(num.Err, strconv.ErrRange):
			cause = errors.New("out of range")
		case strings.HasPrefix(f.Value.Type(), "uint"):
			cause = errors.New("want a whole number, 0 or more")
		case strings.HasPrefix(f.Value.Type(), "int"):
			cause = errors.New("want a whole number")
		case strings.HasPrefix(f.Value.Type(), "float"):
			cause = errors.New("want a number")
		case f.Value.Type() == "bool":
			cause = errors.New("want true or false")
		default:
			cause = errors.New("not a valid " + f.Value.Type())
		}
	}
	return fmt.Errorf("%s %q: %v", name, bad.GetValue(), cause)
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

// outputValue is a batch output format of package output's (text, json,
// folded: collapsed stacks for flame graphs).
type outputValue string

func (o *outputValue) String() string { return string(*o) }
func (o *outputValue) Type() string   { return output.List("|") }

func (o *outputValue) Set(s string) error {
	if _, err := output.Lookup(s); err != nil {
		return err
	}
	*o = outputValue(s)
	return nil
}

// format is the output format o names; the flag took only names Lookup
// knows, so only a zero value is unknown, which reads as the default.
func (o outputValue) format() *output.Format {
	if f, err := output.Lookup(string(o)); err == nil {
		return f
	}
	return &output.Formats[0]
}

// loadOutputValue is load's -o: text, or json. load has no stacks to
// fold, so folded is refused rather than taken for text.
type loadOutputValue string

func (o *loadOutputValue) String() string { return string(*o) }
func (o *loadOutputValue) Type() string   { return "text|json" }

func (o *loadOutputValue) Set(s string) error {
	switch s {
	case "text", "json":
		*o = loadOutputValue(s)
		return nil
	}
	return errors.New("want text or json")
}
