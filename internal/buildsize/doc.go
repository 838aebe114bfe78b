// Package buildsize has no code: its test builds the shipped binary the way
// the Makefile does and fails when it outgrows its budget, so a dependency
// that drags in megabytes (fonts, a template engine that defeats the
// linker's dead-code removal) is caught in review rather than by users.
package buildsize
