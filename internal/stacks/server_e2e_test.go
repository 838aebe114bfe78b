package stacks_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/stacks"
)

// TestCaptureNamesWhereAStrippedServerBlocks traces Debian's debuginfod,
// a stripped C++ server (libmicrohttpd's worker threads, sqlite, a
// scanner pool), while a client keeps asking it for a debug file it does
// not have. Its own functions have no names anywhere (no .symtab, no
// debug package installed), so its stacks must show the library
// functions its threads block and wake in, and its own code as object and
// offset: never a bare address, never a frame made up from a register
// holding data (the issue saw heap and text addresses as frames, and
// WHY naming one).
func TestCaptureNamesWhereAStrippedServerBlocks(t *testing.T) {
	needBPF(t)
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("debuginfod is not installed; CI installs it: %v", err)
		}
		t.Skipf("debuginfod is not installed: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, bin, "-F", "-p", port, "-d", filepath.Join(dir, "db.sqlite"), "-t", "1", "-g", "1", dir)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); srv.Wait() }()
	url := "http://127.0.0.1:" + port + "/buildid/0123456789abcdef0123456789abcdef01234567/debuginfo"
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("debuginfod never answered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if resp, err := http.Get(url); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	st := collect(t, srv.Process.Pid, stacks.Options{}, 6)
	var samples, named, truncated uint64
	libs := map[string]bool{}
	check := func(comm string, ss []model.StackShare) {
		for _, s := range ss {
			samples += s.Count
			if s.Truncated != "" {
				truncated += s.Count
			}
			user := s.Frames[s.KernelFrames:]
			if len(user) > 0 && user[0] != "[unknown]" && !strings.Contains(user[0], "+0x") {
				named += s.Count
				libs[user[0]] = true
			}
			for _, f := range s.Frames {
				if strings.HasPrefix(f, "0x") || f == "[unknown]" {
					t.Errorf("%s: frame %q in %q", comm, f, s.Frames)
				}
			}
			if strings.Contains(s.Own, "0x") {
				t.Errorf("%s: own frame %q is no function name", comm, s.Own)
			}
		}
	}
	for _, th := range st.Threads {
		check(strconv.Itoa(th.TID), th.BlockedAt)
		check(strconv.Itoa(th.TID), th.WokenFrom)
	}
	t.Logf("%d samples, %d with the innermost user frame named, %d cut short; innermost user frames %v", samples, named, truncated, libs)
	if samples < 20 {
		t.Fatalf("only %d samples", samples)
	}
	if named*10 < samples*9 {
		t.Errorf("the innermost user frame is named in %d of %d samples, want >= 90%%", named, samples)
	}
	if truncated*10 > samples {
		t.Errorf("%d of %d samples cut short at the default --stack-bytes", truncated, samples)
	}
}
