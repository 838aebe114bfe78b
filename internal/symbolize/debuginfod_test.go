package symbolize

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// startDebuginfod runs elfutils' debuginfod over dir on a free port and
// waits until it serves buildID.
func startDebuginfod(t *testing.T, dir, buildID string) string {
	t.Helper()
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
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, bin, "-F", "-p", strconv.Itoa(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"), "-t", "0", "-g", "0", "-c", "1", dir)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c.Wait()
	})
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(60 * time.Second) // the first scan, on a busy machine
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/buildid/" + buildID + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("debuginfod on port %d never served %s", port, buildID)
	return ""
}

// TestDebuginfod: a stripped binary whose debug file only a real
// debuginfod server has. The first look-up does not wait for the server
// and names nothing; a later one names the functions; another symbolizer
// then finds the file in the cache without any server.
func TestDebuginfod(t *testing.T) {
	dir := t.TempDir()
	bin, debug := strippedProg(t, dir)
	served := t.TempDir()
	placeFile(t, debug, filepath.Join(served, "cprog.debug"))
	os.Remove(debug)
	id := buildID(t, bin)
	url := startDebuginfod(t, served, id)
	p := start(t, bin)
	cache := filepath.Join(t.TempDir(), "ctxtop", "debuginfod")
	empty := t.TempDir()

	s := newSymbolizer(t, Options{DebugRoot: empty, Debuginfod: &Debuginfod{URLs: []string{url}, Cache: cache}})
	checkNamed(t, s, p, false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		f := symbolizeUser(t, s, p.pid(), ExactAddresses, p.addr(t, "consumer_wait"))[0]
		if f.Function == "consumer_wait" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer_wait still unnamed (%s) 30 s after the fetch began", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkNamed(t, s, p, true)
	if _, err := os.Stat(filepath.Join(cache, id, "debuginfo")); err != nil {
		t.Errorf("not cached: %v", err)
	}

	// From the cache, with no server to ask.
	offline := newSymbolizer(t, Options{DebugRoot: empty, Debuginfod: &Debuginfod{URLs: []string{"http://127.0.0.1:1"}, Cache: cache}})
	checkNamed(t, offline, p, true)
}

// TestDebuginfodMissesAndHangs: a server without the file is asked once
// (negative caching), and a server that never answers neither blocks a
// look-up nor leaves the fetch pending past its timeout.
func TestDebuginfodMissesAndHangs(t *testing.T) {
	bin, _ := strippedProg(t, t.TempDir())
	p := start(t, bin)
	var asked atomic.Int32
	missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer missing.Close()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	id := buildID(t, bin)

	s := newSymbolizer(t, Options{DebugRoot: t.TempDir(), Debuginfod: &Debuginfod{URLs: []string{missing.URL}, Cache: t.TempDir()}})
	deadline := time.Now().Add(20 * time.Second)
	for !s.debuginfod.ready(id) || asked.Load() == 0 {
		checkNamed(t, s, p, false)
		if time.Now().After(deadline) {
			t.Fatal("the fetch from the server without the file never finished")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range 5 {
		checkNamed(t, s, p, false)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the server without the file was asked %d times, want 1", n)
	}

	s = newSymbolizer(t, Options{DebugRoot: t.TempDir(), Debuginfod: &Debuginfod{URLs: []string{hang.URL}, Cache: t.TempDir(), Timeout: 300 * time.Millisecond}})
	began := time.Now()
	checkNamed(t, s, p, false)
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("a look-up took %v with the server hanging: it must not wait for it", d)
	}
	for !s.debuginfod.ready(id) {
		if time.Since(began) > 20*time.Second {
			t.Fatal("the fetch from the hanging server did not time out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDebuginfodHTTPS fetches over TLS, as from debuginfod.debian.net,
// from a server that answers as debuginfod does, and refuses a server
// whose certificate the host does not trust, and a file of another build.
func TestDebuginfodHTTPS(t *testing.T) {
	dir := t.TempDir()
	bin, debug := strippedProg(t, dir)
	body, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(otherDebug(t))
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(t, bin)
	var serve atomic.Pointer[[]byte]
	serve.Store(&other)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/buildid/"+id+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		w.Write(*serve.Load())
	}))
	defer srv.Close()
	p := start(t, bin)
	fetch := func(trusted bool) *Symbolizer {
		s := newSymbolizer(t, Options{DebugRoot: t.TempDir(), Debuginfod: &Debuginfod{URLs: []string{srv.URL}, Cache: t.TempDir()}})
		if trusted {
			s.debuginfod.roots = x509.NewCertPool()
			s.debuginfod.roots.AddCert(srv.Certificate())
		}
		checkNamed(t, s, p, false) // starts the fetch
		deadline := time.Now().Add(20 * time.Second)
		for !s.debuginfod.ready(id) {
			if time.Now().After(deadline) {
				t.Fatal("the fetch never finished")
			}
			time.Sleep(20 * time.Millisecond)
		}
		return s
	}
	checkNamed(t, fetch(true), p, false)  // another build's file: refused
	checkNamed(t, fetch(false), p, false) // an untrusted server
	serve.Store(&body)
	checkNamed(t, fetch(true), p, true)
}
