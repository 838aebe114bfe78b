// Package settings keeps the live monitor's view between runs, as htop
// keeps its htoprc: the row kind, tree and grouping, sort column and
// order, refresh interval, filter and hidden columns, in $XDG_CONFIG_HOME/ctxtop/settings.json
// (~/.config/ctxtop/ by default).
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"time"
)

// File is the settings file's name in its directory.
const File = "settings.json"

// maxSize bounds what Load reads: the file is a few hundred bytes, and a
// huge one is not ours.
const maxSize = 64 << 10

// Views are the row kinds View may hold.
var Views = []string{"threads", "processes", "cgroups"}

// Settings is what the monitor restores at start. The zero value is the
// monitor's default for every field.
type Settings struct {
	// View is the row kind: threads, processes or cgroups ("" threads).
	View string `json:"view,omitempty"`
	// Tree shows each process above its threads.
	Tree bool `json:"tree,omitempty"`
	// Grouped groups rows by name pattern.
	Grouped bool `json:"grouped,omitempty"`
	// Sort is the sort column's title as the table shows it ("TOTAL/s");
	// Reverse flips its order.
	Sort    string `json:"sort,omitempty"`
	Reverse bool   `json:"reverse,omitempty"`
	// Interval is the refresh interval as a Go duration ("500ms").
	Interval string `json:"interval,omitempty"`
	// Filter is the table's filter text.
	Filter string `json:"filter,omitempty"`
	// Hidden are the columns the user hid, by their titles as the table
	// shows them, per row kind (a key of Views). The hidden ones are kept
	// rather than the shown ones, so that a column a later version adds
	// shows; a title or kind this version does not know is ignored.
	Hidden map[string][]string `json:"hidden_columns,omitempty"`
}

// Equal says whether s and o hold the same view; an empty list of hidden
// columns is no list.
func (s Settings) Equal(o Settings) bool {
	return reflect.DeepEqual(s.normal(), o.normal())
}

// normal is s with no empty list of hidden columns, and no empty map.
func (s Settings) normal() Settings {
	h := map[string][]string{}
	for k, v := range s.Hidden {
		if len(v) > 0 {
			h[k] = v
		}
	}
	s.Hidden = nil
	if len(h) > 0 {
		s.Hidden = h
	}
	return s
}

// IntervalDuration is Interval parsed; 0 when unset.
func (s Settings) IntervalDuration() time.Duration {
	d, _ := time.ParseDuration(s.Interval)
	return d
}

// check refuses values the monitor cannot take, so that a hand-edited
// file with a typo is reported instead of half applied.
func (s Settings) check() error {
	if s.View != "" {
		ok := false
		for _, v := range Views {
			ok = ok || v == s.View
		}
		if !ok {
			return fmt.Errorf("view %q: want threads, processes or cgroups", s.View)
		}
	}
	if s.Interval != "" {
		d, err := time.ParseDuration(s.Interval)
		if err != nil || d < 100*time.Millisecond || d > time.Hour {
			return fmt.Errorf("interval %q: want a duration from 100ms to 1h", s.Interval)
		}
	}
	if len(s.Filter) > 256 {
		return errors.New("filter longer than 256 bytes")
	}
	return nil
}

// Dir is where the settings live: $XDG_CONFIG_HOME/ctxtop, else
// ~/.config/ctxtop; "" when neither is known (no HOME).
func Dir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "ctxtop")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".config", "ctxtop")
	}
	return ""
}

// Load reads the settings in dir. A missing file is the defaults with no
// error; a file that is not a regular file, too large, not JSON or with a
// value the monitor cannot take is an error, and the defaults.
func Load(dir string) (Settings, error) {
	path := filepath.Join(dir, File)
	// O_NONBLOCK: opening a FIFO would otherwise wait for a writer, and
	// the monitor would never start.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, err
	}
	defer f.Close()
	// Neither a FIFO nor a device is a settings file.
	if fi, err := f.Stat(); err != nil {
		return Settings{}, err
	} else if !fi.Mode().IsRegular() {
		return Settings{}, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return Settings{}, err
	}
	if len(b) > maxSize {
		return Settings{}, fmt.Errorf("%s: larger than %d KiB", path, maxSize>>10)
	}
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.check(); err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Save writes s to dir atomically: a temporary file beside the old one,
// renamed over it, so that a crash or a full disk leaves the old settings
// whole rather than half a file.
func Save(dir string, s Settings) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+File+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, File))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
