package symbolize

import (
	"strings"

	"github.com/ctxtop/ctxtop/internal/demangle"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// displayName turns a stored symbol name into what a Frame shows: C++ and
// Rust names demangled, short by default ("app::WorkQueue::take", without
// argument lists, template arguments or clone suffixes such as
// ".constprop.0"), everything sanitized for a terminal. A name the
// demangler refuses is shown as stored.
func displayName(name string, full bool) string {
	if strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "_R") {
		// 2^12 = 4,096 bytes at most: a crafted mangled name can otherwise
		// expand exponentially through back-references.
		demangledMax := demangle.MaxLength(12)
		var d string
		var err error
		if full {
			d, err = demangle.ToString(name, demangledMax)
		} else {
			d, err = demangle.ToString(name, demangledMax, demangle.NoParams, demangle.NoTemplateParams, demangle.NoEnclosingParams)
		}
		if err == nil {
			name = d
		}
	}
	return sanitize.Name(name)
}
