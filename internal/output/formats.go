package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Writer writes one report per Snapshot.
type Writer interface {
	Write(*model.Snapshot) error
}

// Ender is a Writer with a last word once the reports are out, for
// stderr: why the output is empty, say. "" for none.
type Ender interface {
	End() string
}

// Format is one value of -o: what its reports need from the command line
// and how to make its writer. A new format is a file with its writer and
// an entry in Formats; the flag, its check and its completion read them.
type Format struct {
	Name string
	// Batch formats are for programs: asking for one means reports, not
	// the monitor, even on a terminal.
	Batch bool
	// AllRows formats print every row unless --top is given.
	AllRows bool
	// Stacks formats print the interval's collapsed stacks: they imply
	// --stacks, and the source keeps the collapsed stacks for them.
	Stacks bool
	// Host formats name the host in their reports: Options.Host is read
	// for them, once, and only for them.
	Host bool
	// Help says what the format is, when its name does not, for -o's help.
	Help string
	New  func(w io.Writer, o Options) Writer
}

// Formats are the values of -o, the default first.
var Formats = [...]Format{
	{Name: "text", New: func(w io.Writer, o Options) Writer { return NewText(w, o) }},
	{Name: "json", Batch: true, AllRows: true, Host: true, New: func(w io.Writer, o Options) Writer { return NewJSON(w, o) }},
	{Name: "folded", Batch: true, Stacks: true, Help: "collapsed stacks for flame graphs", New: func(w io.Writer, o Options) Writer {
		f := NewFolded(w, o.Processes)
		f.hot = o.Hot
		return f
	}},
}

// Lookup is the format named name; an error that lists the others when
// there is none.
func Lookup(name string) (*Format, error) {
	for i := range Formats {
		if Formats[i].Name == name {
			return &Formats[i], nil
		}
	}
	return nil, fmt.Errorf("want %s", List(" or "))
}

// Names are the formats' names, for completion.
func Names() []string {
	names := make([]string, len(Formats))
	for i := range Formats {
		names[i] = Formats[i].Name
	}
	return names
}

// List names the formats in a sentence: "text, json or folded" with last
// " or ", "text|json|folded" with "|".
func List(last string) string {
	names := Names()
	if last == "|" || len(names) < 2 {
		return strings.Join(names, last)
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

// Usage is -o's help: "text, json or folded (folded: collapsed stacks for
// flame graphs; implies --stacks)". live says that the command samples,
// where a Stacks format turns the stacks on; a replay has what was
// recorded.
func Usage(live bool) string {
	var b strings.Builder
	b.WriteString("batch output format: ")
	b.WriteString(List(" or "))
	for i := range Formats {
		f := &Formats[i]
		if f.Help == "" {
			continue
		}
		fmt.Fprintf(&b, " (%s: %s", f.Name, f.Help)
		if live && f.Stacks {
			b.WriteString("; implies --stacks")
		}
		b.WriteString(")")
	}
	return b.String()
}
