package testutil

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartServe runs `ctxtop serve` with args (which should include a
// --web.listen-address with port 0) for the rest of the test, and returns
// the address it listens on, taken from its "Listening on" log line. At the
// end of the test it is stopped with SIGTERM and must exit 0.
func StartServe(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	var log strings.Builder
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			log.WriteString(line + "\n")
			if strings.Contains(line, `msg="Listening on"`) {
				if i := strings.Index(line, "address="); i >= 0 {
					select {
					case addr <- strings.Fields(line[i+len("address="):])[0]:
					default:
					}
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			<-logDone
			if err != nil {
				t.Errorf("ctxtop serve exited with %v after SIGTERM; log:\n%s", err, log.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("ctxtop serve did not exit within 10 s of SIGTERM")
		}
	})
	select {
	case a := <-addr:
		return a
	case <-logDone:
		t.Fatalf("ctxtop serve %v exited before listening:\n%s", args, log.String())
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("ctxtop serve did not say where it listens")
	}
	return ""
}
