package tui

import (
	"os"
	"runtime"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"

	"github.com/ctxtop/ctxtop/internal/tui/textutil"
)

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// drawnCost is the heap a terminal of w x h holds once the monitor has
// drawn a frame on it, as Run draws: ultraviolet's screen behind the
// eventloop's Terminal, resized to the terminal, then the root model's frame.
func drawnCost(t *testing.T, w, h int) (bytes uint64, frame string) {
	t.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	before := heapInUse()
	tty := newWatchedTTY(null, null)
	term := uvTerminal{uv.NewTerminal(uv.NewConsole(tty.in, tty.out, nil), nil), tty}
	term.Resize(w, h)
	m := sampled(t, newRoot(t, &fakeSource{}, w, h))
	frame = m.Render()
	if err := term.Display(frame); err != nil {
		t.Fatal(err)
	}
	after := heapInUse()
	runtime.KeepAlive(term)
	return after - before, frame
}

// TestHugeTerminalCostsNoMoreThanTheLargestLayout: ultraviolet keeps cell
// buffers of the terminal's size (about 330 bytes a cell, three of them),
// so a 3000x1000 terminal held 984 MB here, where the largest size the
// monitor lays out, maxWidth x maxHeight, holds a sixth of that. A terminal
// past it now costs what that size costs, and the frame fits it.
func TestHugeTerminalCostsNoMoreThanTheLargestLayout(t *testing.T) {
	capCost, _ := drawnCost(t, maxWidth, maxHeight)
	hugeCost, frame := drawnCost(t, 3*maxWidth, 2*maxHeight)
	t.Logf("heap held: %d MB at %dx%d, %d MB at %dx%d", capCost>>20, maxWidth, maxHeight, hugeCost>>20, 3*maxWidth, 2*maxHeight)
	if limit := capCost + capCost/10 + 1<<20; hugeCost > limit {
		t.Errorf("a %dx%d terminal holds %d MB, want at most %d MB (what %dx%d holds, plus 10%%)",
			3*maxWidth, 2*maxHeight, hugeCost>>20, limit>>20, maxWidth, maxHeight)
	}
	lines := strings.Split(frame, "\n")
	if len(lines) > maxHeight {
		t.Errorf("frame of %d lines, want at most %d", len(lines), maxHeight)
	}
	for i, l := range lines {
		if w := textutil.Width(l); w > maxWidth {
			t.Errorf("frame line %d is %d wide, want at most %d", i, w, maxWidth)
			break
		}
	}
}
