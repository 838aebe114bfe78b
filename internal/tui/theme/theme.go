// Package theme holds every style the TUI uses, chosen once for the
// terminal's background and colour setting and passed down to components.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Theme is the set of styles shared by all components.
type Theme struct {
	NoColor bool
	// Title is the program name and the header's labels.
	Title lipgloss.Style
	// Dim is secondary text: units, hints, idle rows.
	Dim lipgloss.Style
	// Value is an emphasised figure.
	Value lipgloss.Style
	// ColumnHeader is the table's header row; SortedColumn the sort key's label.
	ColumnHeader lipgloss.Style
	SortedColumn lipgloss.Style
	// Selected is the selected row.
	Selected lipgloss.Style
	// Hot are the highlight levels for hot rows, mild to strong.
	Hot [3]lipgloss.Style
	// Spike marks the header while the system spike rule fires.
	Spike lipgloss.Style
	// Spark is the sparklines and bars.
	Spark lipgloss.Style
	// Key is a key name in hints and help.
	Key lipgloss.Style
	// Pinned marks a thread's CPU set when it is pinned.
	Pinned lipgloss.Style
	// Load marks rows of ctxtop's own load generator.
	Load lipgloss.Style
	// Big is the block-digit figures of the demo.
	Big lipgloss.Style
	// Error is a sampling error line.
	Error lipgloss.Style
}

// New returns the theme for a dark or light background. With noColor only
// bold and reverse video are used, as NO_COLOR asks.
func New(noColor, dark bool) Theme {
	if noColor {
		bold := lipgloss.NewStyle().Bold(true)
		rev := lipgloss.NewStyle().Reverse(true)
		plain := lipgloss.NewStyle()
		return Theme{
			NoColor:      true,
			Title:        bold,
			Dim:          plain,
			Value:        bold,
			ColumnHeader: rev,
			SortedColumn: rev.Bold(true),
			Selected:     rev,
			Hot:          [3]lipgloss.Style{plain, bold, bold},
			Spike:        rev.Bold(true),
			Spark:        plain,
			Key:          bold,
			Pinned:       bold,
			Load:         bold,
			Big:          bold,
			Error:        bold,
		}
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, dk string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dk)) }
	accent := c("#005f87", "#5fafff")
	return Theme{
		Title:        lipgloss.NewStyle().Bold(true).Foreground(accent),
		Dim:          lipgloss.NewStyle().Foreground(c("#6c6c6c", "#8a8a8a")),
		Value:        lipgloss.NewStyle().Bold(true),
		ColumnHeader: lipgloss.NewStyle().Bold(true).Foreground(c("#ffffff", "#000000")).Background(c("#005f87", "#5fafd7")),
		SortedColumn: lipgloss.NewStyle().Bold(true).Foreground(c("#ffffff", "#000000")).Background(c("#005f87", "#5fafd7")),
		Selected:     lipgloss.NewStyle().Reverse(true),
		Hot: [3]lipgloss.Style{
			lipgloss.NewStyle().Foreground(c("#875f00", "#ffd75f")),
			lipgloss.NewStyle().Bold(true).Foreground(c("#af5f00", "#ffaf00")),
			lipgloss.NewStyle().Bold(true).Foreground(c("#af0000", "#ff5f5f")),
		},
		Spike:  lipgloss.NewStyle().Bold(true).Foreground(c("#ffffff", "#000000")).Background(c("#af0000", "#ff5f5f")),
		Spark:  lipgloss.NewStyle().Foreground(c("#008700", "#87d787")),
		Key:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		Pinned: lipgloss.NewStyle().Foreground(c("#870087", "#d787ff")),
		Load:   lipgloss.NewStyle().Foreground(c("#005faf", "#87d7ff")),
		Big:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		Error:  lipgloss.NewStyle().Bold(true).Foreground(c("#af0000", "#ff5f5f")),
	}
}
