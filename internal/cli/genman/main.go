// Command genman writes ctxtop's man pages, ctxtop.1 and a page per
// subcommand, into the directory it is given, from the commands themselves,
// so they never drift from --help. make install runs it (go run, with the
// version the binary is stamped with).
//
// It is a build-time tool rather than a hidden command of ctxtop: cobra's
// man page generator (go-md2man and blackfriday) cost the shipped binary
// 0.28 MB for something only an installer runs.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra/doc"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/cli"
	"github.com/ctxtop/ctxtop/internal/tui/help"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genman DIR")
		os.Exit(2)
	}
	if err := genMan(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen-man: "+err.Error())
		os.Exit(1)
	}
}

func genMan(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return unwrapPath(err)
	}
	root := cli.RootCommand()
	// Execute adds these; the pages document them as ctxtop --help does.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Title: "CTXTOP", Section: "1", Source: "ctxtop " + cli.Version(), Manual: "ctxtop manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return unwrapPath(err)
	}
	// The monitor's keys and columns, from the help screen's own lists,
	// before SEE ALSO, which ends a manual page.
	return unwrapPath(addManSections(filepath.Join(dir, root.Name()+".1"), monitorManSections()))
}

// unwrapPath keeps an error about a path to the path and the reason.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// monitorManSections are the KEYS and COLUMNS sections of ctxtop(1): what
// the help screen (? in the monitor) shows, in roff.
func monitorManSections() string {
	var b strings.Builder
	b.WriteString(".SH KEYS\n.PP\nIn the live monitor and in a replay:\n")
	for _, group := range keys.New().FullHelp() {
		for _, k := range group {
			h := k.Help()
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", roffEscape(h.Key), roffEscape(h.Desc))
		}
	}
	b.WriteString(".SH COLUMNS\n")
	for _, line := range help.Legend() {
		// A line that goes on from the one before (lower case) stays in
		// its paragraph; roff fills the lines of one.
		if r := line[0]; r < 'a' || r > 'z' {
			b.WriteString(".PP\n")
		}
		b.WriteString(roffEscape(line) + "\n")
	}
	return b.String()
}

// roffEscape keeps a line of text from being read as a roff request or
// escape: backslashes doubled, a leading dot or quote protected.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// addManSections puts sections into the page at path ahead of its SEE ALSO
// (at its end when it has none), never writing through a symlink.
func addManSections(path, sections string) error {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	page, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return err
	}
	text := string(page)
	if i := strings.Index(text, ".SH SEE ALSO"); i >= 0 {
		text = text[:i] + sections + text[i:]
	} else {
		text += sections
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		return err
	}
	return f.Close()
}
