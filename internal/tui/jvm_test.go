package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

// fakeJVM stands in for package jvm: process 4242 is a JVM with no perf
// map until asked for one.
type fakeJVM struct {
	perfMap bool
	asked   []int
}

func (f *fakeJVM) Notes(pid int) ([]string, bool) {
	if pid != 4242 {
		return nil, false
	}
	notes := []string{fmt.Sprintf("JVM %d: no -XX:+PreserveFramePointer, so Java stacks end in JIT code", pid)}
	if !f.perfMap {
		notes = append([]string{fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed", pid)}, notes...)
	}
	return notes, f.perfMap
}

func (f *fakeJVM) AskPerfMap(pid int) (string, error) {
	f.asked = append(f.asked, pid)
	if f.perfMap {
		return "", errors.New("asked twice")
	}
	f.perfMap = true
	return fmt.Sprintf("asked JVM %d for a perf map: 812 methods", pid), nil
}

// TestJVMKeyAsksForAPerfMap: the detail view of a JVM's thread says what
// its stacks lack; J (and only J) asks it for a perf map, off the event
// loop, and the footer and the notes say what came of it.
func TestJVMKeyAsksForAPerfMap(t *testing.T) {
	j := &fakeJVM{}
	m := actionRoot(t, nil, Options{JVM: j})
	m, _ = step(t, m, press("enter"))
	screen := ansi.Strip(m.Render())
	for _, want := range []string{
		"JVM 4242: no perf map, its JIT frames are unnamed (J asks it for one)",
		"JVM 4242: no -XX:+PreserveFramePointer, so Java stacks end in JIT code",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the detail view lacks %q:\n%s", want, screen)
		}
	}
	if len(j.asked) != 0 {
		t.Fatalf("the JVM was asked before J: %v", j.asked)
	}
	next, cmd := m.Update(press("J"))
	m = next.(Model)
	if got := footerOf(m); !strings.HasPrefix(got, "asking JVM 4242 for a perf map") {
		t.Errorf("footer while asking: %q", got)
	}
	if cmd == nil {
		t.Fatal("J returned no command")
	}
	m, _ = step(t, m, cmd())
	if diff := cmp.Diff([]int{4242}, j.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if got := footerOf(m); !strings.HasPrefix(got, "asked JVM 4242 for a perf map: 812 methods") {
		t.Errorf("footer after asking: %q", got)
	}
	screen = ansi.Strip(m.Render())
	if strings.Contains(screen, "no perf map") || !strings.Contains(screen, "no -XX:+PreserveFramePointer") {
		t.Errorf("the notes after the perf map came:\n%s", screen)
	}
}

// TestJVMKeyWithoutJVMs: where the monitor cannot reach JVMs (a replay,
// another --proc), J says so.
func TestJVMKeyWithoutJVMs(t *testing.T) {
	m := actionRoot(t, nil, Options{})
	m, _ = step(t, m, press("enter"))
	m, msgs := step(t, m, press("J"))
	if len(msgs) != 0 || !strings.Contains(footerOf(m), "not possible here") {
		t.Errorf("J without JVM support: footer %q, messages %v", footerOf(m), msgs)
	}
}
