package webconfig

// The YAML that web configuration files are written in, read without a
// YAML library: go.yaml.in/yaml/v2 cost 229 KB of the binary to read a
// file of a dozen keys. Within the subset below it gives what
// yaml.v2's UnmarshalStrict gives (the tests hold it to that, yaml.v2
// being their oracle); outside it, it refuses with an error that says
// which construct it does not read, rather than guess.
//
// Read: block mappings and sequences (nested, compact "- key: value",
// sequences at their key's indentation); flow sequences and mappings
// ([a, b], {k: v}, over several lines too); plain, single- and
// double-quoted scalars (with yaml.v2's escapes) on one line; literal and
// folded block scalars (| > with chomping and indentation indicators);
// comments; a "---" before the document.
//
// Not read (refused as unsupported): anchors, aliases, tags, merge keys,
// explicit "?" keys, empty keys, directives, several documents or "...",
// plain and quoted scalars continued onto a further line, tabs where
// indentation is, and line breaks other than \n and \r\n.
//
// Values follow yaml.v2's resolution: only plain scalars are null, bool or
// numbers (bools include yes/no/on/off), a null value leaves the field's
// zero value, a string takes any scalar's text, an int takes ints and
// floats (truncated), a time.Duration takes a Go duration or a number of
// nanoseconds. Unknown and repeated keys are errors.

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

type nodeKind uint8

const (
	scalarNode nodeKind = iota
	seqNode
	mapNode
)

type node struct {
	kind  nodeKind
	plain bool // only plain scalars resolve to null, bools and numbers
	value string
	line  int
	// Items of a sequence; keys and values, alternately, of a mapping.
	children []*node
}

// yamlError is a syntax or type error at a line (0: none). unsupported
// marks YAML that is valid, or may be, but outside the subset read here.
type yamlError struct {
	line        int
	msg         string
	unsupported bool
}

func (e *yamlError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("yaml: line %d: %s", e.line, e.msg)
	}
	return "yaml: " + e.msg
}

// yamlParser reads the source line by line: block structure is a matter
// of lines and their indentation. The parse functions panic with a
// *yamlError, recovered by parseYAML alone.
type yamlParser struct {
	lines []string
	i     int // current line
	c     int // byte offset in it
}

func (p *yamlParser) fail(format string, args ...any) {
	panic(&yamlError{line: p.i + 1, msg: fmt.Sprintf(format, args...)})
}

func (p *yamlParser) unsupported(what string) {
	panic(&yamlError{line: p.i + 1, msg: what + " not supported in web config files", unsupported: true})
}

// parseYAML returns the document's root node, or nil when the source has
// no document (empty, or comments only).
func parseYAML(src []byte) (*node, error) {
	lines, bad, err := splitLines(src)
	if err != nil {
		return nil, err
	}
	root, perr := parseLines(lines)
	// yaml.v2 reads no further than its parse needs: a bad character
	// past the root node may go unseen, so refusing what lies there as
	// unsupported comes first.
	if bad != nil && (perr == nil || perr.line > bad.line || perr.line == bad.line && !perr.unsupported) {
		return nil, bad
	}
	if perr != nil {
		return nil, perr
	}
	return root, nil
}

func parseLines(lines []string) (root *node, err *yamlError) {
	p := &yamlParser{lines: lines}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*yamlError)
			if !ok {
				panic(r)
			}
			root, err = nil, e
		}
	}()
	return p.document(), nil
}

// splitLines splits the source at its line breaks (the last line is
// empty when the source ends with one). It checks the characters as
// yaml.v2's reader does: bad is the first that it refuses, err the first
// that is not supported here.
func splitLines(src []byte) (lines []string, bad *yamlError, err error) {
	s := string(src)
	if strings.HasPrefix(s, "\xfe\xff") || strings.HasPrefix(s, "\xff\xfe") {
		return nil, nil, &yamlError{msg: "UTF-16 not supported in web config files", unsupported: true}
	}
	s = strings.TrimPrefix(s, "\ufeff")
	line := 1
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd"):
			bad = cmp.Or(bad, &yamlError{line: line, msg: "invalid UTF-8"})
		case r == '\n':
			line++
		case r == '\r':
			if !strings.HasPrefix(s[i:], "\r\n") {
				return nil, nil, &yamlError{line: line, msg: "line breaks other than \\n and \\r\\n not supported in web config files", unsupported: true}
			}
		case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff:
			return nil, nil, &yamlError{line: line, msg: fmt.Sprintf("character %U not supported in web config files", r), unsupported: true}
		case r == '\t', r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
		default:
			bad = cmp.Or(bad, &yamlError{line: line, msg: "control characters are not allowed"})
		}
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), bad, nil
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// at is the byte at offset c of the current line, 0 past its end.
func (p *yamlParser) at(c int) byte {
	if p.i < len(p.lines) && c < len(p.lines[p.i]) {
		return p.lines[p.i][c]
	}
	return 0
}

// blankz: a blank or the end of the line at offset c.
func (p *yamlParser) blankz(c int) bool { b := p.at(c); return b == 0 || isBlank(b) }

func (p *yamlParser) skipBlanks() {
	for isBlank(p.at(p.c)) {
		p.c++
	}
}

// endOfLine requires nothing but blanks and a comment up to the line's end.
func (p *yamlParser) endOfLine() {
	p.skipBlanks()
	if b := p.at(p.c); b != 0 && b != '#' {
		p.fail("did not find expected comment or line break after a value")
	}
}

// endOfRoot refuses content after a root node (n < 0) on its line.
func (p *yamlParser) endOfRoot(n int) {
	if n < 0 && !p.restEmpty() {
		p.unsupported("content after the document's root node")
	}
}

// restEmpty is true when nothing but blanks and a comment remain on the line.
func (p *yamlParser) restEmpty() bool {
	c := p.c
	for isBlank(p.at(c)) {
		c++
	}
	b := p.at(c)
	return b == 0 || b == '#'
}

// docMarker: the line starts with "---" or "..." as a document marker.
func docMarker(l string) bool {
	return len(l) >= 3 && (l[:3] == "---" || l[:3] == "...") && (len(l) == 3 || isBlank(l[3]))
}

// next moves past the current line and then past blank and comment lines,
// to the first content character of the next line with content, and
// returns its indentation; ok is false at the end of the source or at a
// document marker.
func (p *yamlParser) next() (indent int, ok bool) {
	p.i++
	return p.content()
}

// content is next without leaving the current line first.
func (p *yamlParser) content() (indent int, ok bool) {
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		c := 0
		for c < len(l) && l[c] == ' ' {
			c++
		}
		if c < len(l) && l[c] == '\t' {
			// yaml.v2 mostly refuses these too, but not after a plain
			// scalar; simpler to refuse them all.
			p.c = c
			p.unsupported("a tab in indentation")
		}
		if c == len(l) || l[c] == '#' {
			continue
		}
		p.c = c
		if docMarker(l) {
			return 0, false
		}
		return c, true
	}
	p.c = 0
	return 0, false
}

func (p *yamlParser) document() *node {
	_, ok := p.content()
	if p.i == len(p.lines) {
		return nil
	}
	if !ok || p.at(0) == '%' {
		if p.at(0) == '%' {
			p.unsupported("a directive")
		}
		if p.at(0) == '.' {
			p.unsupported(`"..."`)
		}
		p.c = 3
		if !p.restEmpty() {
			p.unsupported(`content on the "---" line`)
		}
		if _, ok = p.next(); !ok {
			if p.i < len(p.lines) {
				p.unsupported("several documents")
			}
			return &node{kind: scalarNode, plain: true, line: p.i}
		}
	}
	root := p.blockNode(-1)
	if _, ok := p.content(); ok {
		// yaml.v2 reads no further than the root node it needs.
		p.unsupported("content after the document's root node")
	}
	if p.i < len(p.lines) {
		p.unsupported(`several documents or "..."`)
	}
	return root
}

// blockNode reads the node at the current position, inside a block
// collection indented by n (-1: the root).
func (p *yamlParser) blockNode(n int) *node {
	switch b := p.at(p.c); {
	case b == '-' && p.blankz(p.c+1):
		return p.blockSeq(p.c)
	case p.keyAhead():
		return p.blockMap(p.c)
	}
	return p.inlineNode(n)
}

// inlineNode reads a scalar or flow collection starting at the current
// position, and leaves the parser at the next line with content.
func (p *yamlParser) inlineNode(n int) *node {
	line := p.i + 1
	switch b := p.at(p.c); b {
	case '|', '>':
		return p.blockScalar(n)
	case '[', '{':
		nd := p.flowCollection()
		p.endOfRoot(n)
		p.endOfLine()
		p.next()
		return nd
	case '"', '\'':
		v, ok := p.quoted()
		if !ok {
			p.unsupported("a quoted scalar over several lines")
		}
		p.endOfRoot(n)
		p.endOfLine()
		p.next()
		return &node{kind: scalarNode, value: v, line: line}
	}
	p.checkNodeStart(false)
	v, colon := p.plain(false)
	if colon {
		p.fail("mapping values are not allowed in this context")
	}
	// yaml.v2 goes on with the scalar on a more indented line.
	if ind, ok := p.next(); ok && ind > n {
		p.unsupported("a plain scalar over several lines")
	}
	return &node{kind: scalarNode, plain: true, value: v, line: line}
}

// checkNodeStart refuses what cannot start a scalar here, as yaml.v2
// does, and what is left out of the subset.
func (p *yamlParser) checkNodeStart(flow bool) {
	b := p.at(p.c)
	switch b {
	case '&':
		p.unsupported("an anchor")
	case '*':
		p.unsupported("an alias")
	case '!':
		p.unsupported("a tag")
	case '?', ':':
		if flow || p.blankz(p.c+1) {
			p.unsupported(fmt.Sprintf("a key or value indicator %q without its key", b))
		}
	case ',', '[', ']', '{', '}', '#', '|', '>', '\'', '"', '%', '@', '`':
		p.fail("found character %q that cannot start any token", b)
	case '-':
		if p.blankz(p.c + 1) {
			p.fail("block sequence entries are not allowed in this context")
		}
	case 0:
		p.fail("did not find expected node content")
	}
}

// keyAhead: the current position starts a simple key, a scalar followed
// on the same line by ": " (or ':' at its end).
func (p *yamlParser) keyAhead() bool {
	save := *p
	defer func() { *p = save }()
	switch b := p.at(p.c); b {
	case '"', '\'':
		if _, ok := p.quoted(); !ok {
			return false
		}
		p.skipBlanks()
		return p.at(p.c) == ':' && p.blankz(p.c+1)
	case '[', '{', '&', '*', '!', '?', ':', '|', '>', '%', '@', '`', ',', ']', '}', '#', '-':
		if b != '-' && b != '?' && b != ':' || p.blankz(p.c+1) {
			return false
		}
	}
	_, colon := p.plain(false)
	return colon
}

// key reads a simple key and its ':'.
func (p *yamlParser) key() *node {
	nd := &node{kind: scalarNode, line: p.i + 1}
	start := p.c
	if b := p.at(p.c); b == '"' || b == '\'' {
		nd.value, _ = p.quoted()
		p.skipBlanks()
	} else {
		nd.plain = true
		nd.value, _ = p.plain(false)
		if nd.value == "<<" {
			p.unsupported("a merge key")
		}
	}
	if p.c-start > 1024 {
		p.unsupported("a key longer than 1024 characters")
	}
	p.c++ // ':'
	return nd
}

// blockMap reads a mapping whose keys are at column k.
func (p *yamlParser) blockMap(k int) *node {
	m := &node{kind: mapNode, line: p.i + 1}
	for {
		if !p.keyAhead() {
			if p.at(p.c) == '-' && p.blankz(p.c+1) {
				p.fail("did not find expected key")
			}
			p.checkNodeStart(false) // anchors and the like on a key
			p.fail("could not find expected ':'")
		}
		key := p.key()
		p.skipBlanks()
		m.children = append(m.children, key, p.value(k))
		ind, ok := p.content()
		if !ok || ind < k {
			return m
		}
		if ind > k {
			p.fail("did not find expected key: the line is indented more than the keys before it")
		}
	}
}

// value reads a mapping's value: on the key's line, or below it.
func (p *yamlParser) value(k int) *node {
	if !p.restEmpty() {
		return p.inlineNode(k)
	}
	line := p.i + 1
	ind, ok := p.next()
	switch {
	case ok && ind > k:
		return p.blockNode(k)
	case ok && ind == k && p.at(p.c) == '-' && p.blankz(p.c+1):
		return p.blockSeq(k)
	}
	return &node{kind: scalarNode, plain: true, line: line}
}

// blockSeq reads a sequence whose "-" are at column s.
func (p *yamlParser) blockSeq(s int) *node {
	seq := &node{kind: seqNode, line: p.i + 1}
	for {
		line := p.i + 1
		p.c++ // '-'
		for p.at(p.c) == ' ' {
			p.c++
		}
		if p.at(p.c) == '\t' {
			p.unsupported("a tab after a block sequence entry")
		}
		var item *node
		if p.restEmpty() {
			if ind, ok := p.next(); ok && ind > s {
				item = p.blockNode(s)
			} else {
				item = &node{kind: scalarNode, plain: true, line: line}
			}
		} else {
			item = p.blockNode(s)
		}
		seq.children = append(seq.children, item)
		ind, ok := p.content()
		if !ok || ind < s || ind == s && !(p.at(p.c) == '-' && p.blankz(p.c+1)) {
			return seq
		}
		if ind > s {
			p.fail("did not find expected '-' indicator: the line is indented more than the entries before it")
		}
	}
}

// plain reads a plain scalar on the current line; colon reports that it
// ends at a value indicator (": "), which is left unread.
func (p *yamlParser) plain(flow bool) (v string, colon bool) {
	l := p.lines[p.i]
	start, end := p.c, p.c
	c := p.c
	for c < len(l) {
		b := l[c]
		if isBlank(b) {
			c++
			continue
		}
		if b == '#' && c > start && isBlank(l[c-1]) {
			break
		}
		if b == ':' && p.blankz(c+1) {
			colon = true
			break
		}
		if flow && strings.IndexByte(",?[]{}", b) >= 0 {
			break
		}
		c++
		end = c
	}
	p.c = end
	if colon {
		p.c = c
	}
	return l[start:end], colon
}

// quoted reads a quoted scalar closed on the current line; ok is false
// when it is not.
func (p *yamlParser) quoted() (v string, ok bool) {
	l := p.lines[p.i]
	q := l[p.c]
	var sb strings.Builder
	for c := p.c + 1; c < len(l); c++ {
		b := l[c]
		switch {
		case b == q && q == '\'' && c+1 < len(l) && l[c+1] == '\'':
			sb.WriteByte('\'')
			c++
		case b == q:
			p.c = c + 1
			return sb.String(), true
		case b == '\\' && q == '"':
			if c+1 == len(l) {
				return "", false // an escaped line break
			}
			c++
			p.c = c
			c += p.escape(&sb, l[c:])
		default:
			sb.WriteByte(b)
		}
	}
	return "", false
}

// escape writes the character that the escape sequence e (after its
// backslash) stands for, and returns the number of further bytes it took.
func (p *yamlParser) escape(sb *strings.Builder, e string) int {
	n := 0
	switch e[0] {
	case '0':
		sb.WriteByte(0)
	case 'a':
		sb.WriteByte('\a')
	case 'b':
		sb.WriteByte('\b')
	case 't', '\t':
		sb.WriteByte('\t')
	case 'n':
		sb.WriteByte('\n')
	case 'v':
		sb.WriteByte('\v')
	case 'f':
		sb.WriteByte('\f')
	case 'r':
		sb.WriteByte('\r')
	case 'e':
		sb.WriteByte(0x1b)
	case ' ', '"', '\'', '\\':
		sb.WriteByte(e[0])
	case 'N':
		sb.WriteString("\u0085")
	case '_':
		sb.WriteString("\u00a0")
	case 'L':
		sb.WriteString("\u2028")
	case 'P':
		sb.WriteString("\u2029")
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		p.fail("found unknown escape character while parsing a quoted scalar")
	}
	if n == 0 {
		return 0
	}
	if len(e) < 1+n {
		p.fail("did not find expected hexdecimal number while parsing a quoted scalar")
	}
	r, err := strconv.ParseUint(e[1:1+n], 16, 32)
	if err != nil {
		p.fail("did not find expected hexdecimal number while parsing a quoted scalar")
	}
	if r >= 0xd800 && r <= 0xdfff || r > 0x10ffff {
		p.fail("found invalid Unicode character escape code while parsing a quoted scalar")
	}
	sb.WriteRune(rune(r))
	return n
}

// flowSpace skips blanks, comments and line breaks inside a flow
// collection; it reports whether it crossed a line break.
func (p *yamlParser) flowSpace() (newline bool) {
	for {
		p.skipBlanks()
		if b := p.at(p.c); b != 0 && b != '#' {
			return newline
		}
		p.i++
		p.c = 0
		newline = true
		if p.i == len(p.lines) {
			p.i--
			p.fail("did not find the end of a flow collection")
		}
		if docMarker(p.lines[p.i]) {
			p.fail("did not find the end of a flow collection before a document marker")
		}
	}
}

// flowCollection reads [ ... ] or { ... }, over lines if need be, and
// stops after its closing bracket.
func (p *yamlParser) flowCollection() *node {
	isMap := p.at(p.c) == '{'
	end := byte(']')
	nd := &node{kind: seqNode, line: p.i + 1}
	if isMap {
		end = '}'
		nd.kind = mapNode
	}
	p.c++
	for {
		p.flowSpace()
		if p.at(p.c) == end {
			p.c++
			return nd
		}
		if isMap {
			nd.children = append(nd.children, p.flowPair(end)...)
		} else {
			nd.children = append(nd.children, p.flowNode())
			p.flowSpace()
			if p.at(p.c) == ':' {
				p.unsupported("a mapping inside a flow sequence")
			}
		}
		switch p.at(p.c) {
		case ',':
			p.c++
		case end:
			p.c++
			return nd
		default:
			p.fail("did not find expected ',' or '%c'", end)
		}
	}
}

// flowPair reads a key and its value, if any, in a flow mapping that
// ends at end.
func (p *yamlParser) flowPair(end byte) []*node {
	key := p.flowNode()
	line := p.i + 1
	newline := p.flowSpace()
	switch {
	case key.kind != scalarNode || newline && p.at(p.c) == ':':
		p.unsupported("a flow mapping key of this form")
	case key.plain && key.value == "<<":
		p.unsupported("a merge key")
	}
	if p.at(p.c) != ':' {
		return []*node{key, {kind: scalarNode, plain: true, line: line}}
	}
	p.c++
	p.flowSpace()
	if b := p.at(p.c); b == ',' || b == end {
		return []*node{key, {kind: scalarNode, plain: true, line: p.i + 1}}
	}
	value := p.flowNode()
	p.flowSpace()
	return []*node{key, value}
}

// flowNode reads one node inside a flow collection.
func (p *yamlParser) flowNode() *node {
	line := p.i + 1
	switch p.at(p.c) {
	case '[', '{':
		return p.flowCollection()
	case '"', '\'':
		v, ok := p.quoted()
		if !ok {
			p.unsupported("a quoted scalar over several lines")
		}
		return &node{kind: scalarNode, value: v, line: line}
	}
	p.checkNodeStart(true)
	v, _ := p.plain(true)
	if p.at(p.c) == '?' {
		p.unsupported(`"?" in a flow collection`)
	}
	save := *p
	p.skipBlanks()
	if p.at(p.c) == 0 || p.at(p.c) == '#' {
		// yaml.v2 goes on with the scalar on the next line unless a flow
		// indicator comes first.
		p.flowSpace()
		if strings.IndexByte(",]}", p.at(p.c)) < 0 {
			p.unsupported("a plain scalar over several lines")
		}
	}
	*p = save
	return &node{kind: scalarNode, plain: true, value: v, line: line}
}

// blockScalar reads a literal (|) or folded (>) scalar as yaml.v2 does,
// inside a block collection indented by n.
func (p *yamlParser) blockScalar(n int) *node {
	line := p.i + 1
	literal := p.at(p.c) == '|'
	p.c++
	chomp, increment := 0, 0
	for range 2 {
		switch b := p.at(p.c); {
		case (b == '+' || b == '-') && chomp == 0:
			chomp = 1
			if b == '-' {
				chomp = -1
			}
			p.c++
		case b >= '0' && b <= '9' && increment == 0:
			if b == '0' {
				p.fail("found an indentation indicator equal to 0")
			}
			increment = int(b - '0')
			p.c++
		}
	}
	if !p.restEmpty() {
		p.fail("did not find expected comment or line break after a block scalar indicator")
	}
	indent := 0
	if increment > 0 {
		indent = increment
		if n >= 0 {
			indent += n
		}
	}
	// The loop follows yaml.v2's scanner: breaks before a line are held
	// back, to be folded or kept by what follows.
	p.i++
	p.c = 0
	var s, leadingBreak, trailingBreaks strings.Builder
	p.blockBreaks(&indent, n, &trailingBreaks)
	leadingBlank := false
	for p.c == indent && p.i < len(p.lines) && !(p.i == len(p.lines)-1 && p.c == len(p.lines[p.i])) {
		trailingBlank := isBlank(p.at(p.c))
		if !literal && !leadingBlank && !trailingBlank && leadingBreak.Len() > 0 {
			if trailingBreaks.Len() == 0 {
				s.WriteByte(' ')
			}
		} else {
			s.WriteString(leadingBreak.String())
		}
		leadingBreak.Reset()
		s.WriteString(trailingBreaks.String())
		trailingBreaks.Reset()
		leadingBlank = isBlank(p.at(p.c))
		s.WriteString(p.lines[p.i][p.c:])
		if p.i < len(p.lines)-1 {
			leadingBreak.WriteByte('\n')
		}
		p.i++
		p.c = 0
		p.blockBreaks(&indent, n, &trailingBreaks)
	}
	if chomp != -1 {
		s.WriteString(leadingBreak.String())
	}
	if chomp == 1 {
		s.WriteString(trailingBreaks.String())
	}
	p.c = 0
	p.content()
	return &node{kind: scalarNode, value: s.String(), line: line}
}

// blockBreaks skips the indentation and empty lines before a block
// scalar's next line and sets indent from them if it is not yet known.
func (p *yamlParser) blockBreaks(indent *int, n int, breaks *strings.Builder) {
	maxIndent := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		p.c = 0
		for (*indent == 0 || p.c < *indent) && p.c < len(l) && l[p.c] == ' ' {
			p.c++
		}
		maxIndent = max(maxIndent, p.c)
		if (*indent == 0 || p.c < *indent) && p.c < len(l) && l[p.c] == '\t' {
			p.fail("found a tab character where an indentation space is expected")
		}
		if p.c < len(l) || p.i == len(p.lines)-1 {
			break
		}
		breaks.WriteByte('\n')
		p.i++
	}
	if *indent == 0 {
		*indent = max(maxIndent, n+1, 1)
	}
}

// unmarshalYAML decodes src into *out as yaml.v2's UnmarshalStrict does,
// within the subset parseYAML reads.
func unmarshalYAML(src []byte, out any) error {
	root, err := parseYAML(src)
	if err != nil || root == nil {
		return err
	}
	return decode(root, reflect.ValueOf(out).Elem())
}

type yamlUnmarshaler interface {
	UnmarshalYAML(unmarshal func(any) error) error
}

func isNull(n *node) bool {
	if n.kind != scalarNode || !n.plain {
		return false
	}
	switch n.value {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

func typeError(n *node, v reflect.Value) error {
	what := map[nodeKind]string{seqNode: "a sequence", mapNode: "a mapping"}[n.kind]
	if n.kind == scalarNode {
		what = strconv.Quote(n.value)
	}
	return &yamlError{line: n.line, msg: fmt.Sprintf("cannot unmarshal %s into %s", what, v.Type())}
}

var durationType = reflect.TypeFor[time.Duration]()

// decode sets v from n; v is settable.
func decode(n *node, v reflect.Value) error {
	// yaml.v2 skips an UnmarshalYAML method for these, quoted or not.
	skip := n.kind == scalarNode && (n.value == "null" || n.value == "~" || n.value == "" && n.plain)
	if u, ok := v.Addr().Interface().(yamlUnmarshaler); ok && !skip {
		err := u.UnmarshalYAML(func(x any) error { return decode(n, reflect.ValueOf(x).Elem()) })
		if _, ok := err.(*yamlError); err != nil && !ok {
			err = &yamlError{line: n.line, msg: err.Error()}
		}
		return err
	}
	if isNull(n) {
		v.SetZero()
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		return decodeStruct(n, v)
	case reflect.Map:
		return decodeMap(n, v)
	case reflect.Slice:
		if n.kind != seqNode {
			return typeError(n, v)
		}
		s := reflect.MakeSlice(v.Type(), len(n.children), len(n.children))
		for i, c := range n.children {
			if err := decode(c, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.kind != scalarNode {
		return typeError(n, v)
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.value)
		return nil
	case reflect.Bool:
		if b, ok := resolve(n).(bool); ok {
			v.SetBool(b)
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch r := resolve(n).(type) {
		case int64:
			if !v.OverflowInt(r) {
				v.SetInt(r)
				return nil
			}
		case float64:
			if r <= math.MaxInt64 && !v.OverflowInt(int64(r)) {
				v.SetInt(int64(r))
				return nil
			}
		case string:
			if v.Type() == durationType {
				if d, err := time.ParseDuration(r); err == nil {
					v.SetInt(int64(d))
					return nil
				}
			}
		}
	}
	return typeError(n, v)
}

// keyString is a key as yaml.v2 decodes it into a string.
func keyString(k *node) string {
	if isNull(k) {
		return ""
	}
	return k.value
}

func decodeStruct(n *node, v reflect.Value) error {
	if n.kind != mapNode {
		return typeError(n, v)
	}
	seen := map[string]bool{}
	for i := 0; i < len(n.children); i += 2 {
		k := n.children[i]
		name := keyString(k)
		f, ok := fieldByKey(v, name)
		switch {
		case !ok:
			return &yamlError{line: k.line, msg: fmt.Sprintf("field %s not found in type %s", name, v.Type())}
		case seen[name]:
			return &yamlError{line: k.line, msg: fmt.Sprintf("field %s already set in type %s", name, v.Type())}
		}
		seen[name] = true
		if err := decode(n.children[i+1], f); err != nil {
			return err
		}
	}
	return nil
}

// fieldByKey is the field whose yaml tag (or, without one, lower-cased
// name) is key.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if f.IsExported() && name == key && name != "-" {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func decodeMap(n *node, v reflect.Value) error {
	if n.kind != mapNode || v.Type().Key().Kind() != reflect.String {
		return typeError(n, v)
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for i := 0; i < len(n.children); i += 2 {
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString(keyString(n.children[i]))
		if v.MapIndex(k).IsValid() {
			return &yamlError{line: n.children[i+1].line, msg: fmt.Sprintf("key %q already set in map", k)}
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := decode(n.children[i+1], e); err != nil {
			return err
		}
		v.SetMapIndex(k, e)
	}
	return nil
}

// resolve is the value yaml.v2 gives a scalar: a bool, int64, uint64 or
// float64 for a plain scalar that reads as one, else its text.
func resolve(n *node) any {
	s := n.value
	if !n.plain || s == "" {
		return s
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false
	case ".nan", ".NaN", ".NAN":
		return math.NaN()
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1)
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1)
	}
	switch b := s[0]; {
	case b == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case b == '+' || b == '-' || b >= '0' && b <= '9':
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return u
		}
		if yamlStyleFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return f
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return i
			}
			if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return u
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return i
			}
		}
	}
	return s
}

// yamlStyleFloat matches ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
// (yaml.v2's test for a float), without the regexp package.
func yamlStyleFloat(s string) bool {
	digits := func() int {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		s = s[i:]
		return i
	}
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s != "" && s[0] == '.' {
		s = s[1:]
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if s != "" && s[0] == '.' {
			s = s[1:]
			digits()
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '-' || s[0] == '+') {
			s = s[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return s == ""
}
