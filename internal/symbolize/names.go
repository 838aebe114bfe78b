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
	} else if !full {
		name = javaName(name)
	}
	return sanitize.Name(name)
}

// javaName is a HotSpot perf map's "void java.util.concurrent.locks.
// LockSupport.park(java.lang.Object)" (Compiler.perfmap) without its
// return type and argument list, as C++ names are shown; the class's
// package stays, which tells the platform's frames from the program's.
// Any other name is returned as it is.
func javaName(name string) string {
	open := strings.IndexByte(name, '(')
	if open < 0 || !strings.HasSuffix(name, ")") {
		return name
	}
	sp := strings.LastIndexByte(name[:open], ' ')
	q := name[sp+1 : open]
	if sp <= 0 || strings.IndexByte(name[:sp], ' ') >= 0 || !strings.Contains(q, ".") || strings.Contains(q, "::") {
		return name
	}
	return q
}
