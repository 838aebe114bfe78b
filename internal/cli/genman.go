package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/tui/help"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
)

// newGenManCmd writes the man pages from the commands themselves, so they
// never drift from --help; make install runs it.
func newGenManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write ctxtop.1 and a page per subcommand into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("gen-man: %w", unwrapPath(err))
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "CTXTOP", Section: "1", Source: "ctxtop " + version, Manual: "ctxtop manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("gen-man: %w", unwrapPath(err))
			}
			// The monitor's keys and columns, from the help screen's own
			// lists, before SEE ALSO, which ends a manual page.
			if err := addManSections(filepath.Join(dir, root.Name()+".1"), monitorManSections()); err != nil {
				return fmt.Errorf("gen-man: %w", unwrapPath(err))
			}
			return nil
		},
	}
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
