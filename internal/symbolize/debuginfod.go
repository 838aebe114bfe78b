package symbolize

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Debuginfod configures fetching debug files from debuginfod servers, the
// protocol of elfutils (GET URL/buildid/HEX/debuginfo), as GDB and perf do
// when DEBUGINFOD_URLS is set. A fetch runs in the background: the look-up
// that starts it names what is known without it, and a later one (after
// the fetch) gets the names. What is fetched is kept in Cache, bounded.
type Debuginfod struct {
	// URLs are the servers, tried in order.
	URLs []string
	// Cache is the directory fetched files are kept in
	// ($XDG_CACHE_HOME/ctxtop/debuginfod).
	Cache string
	// CacheBytes bounds the cache, oldest files out first (default 1 GiB).
	CacheBytes int64
	// MaxFileBytes refuses a larger debug file (default 512 MiB).
	MaxFileBytes int64
	// Timeout bounds one fetch, all servers together (default 90 s).
	Timeout time.Duration
	// RetryAfter is how long a build id no server had is not asked for
	// again (default 10 min).
	RetryAfter time.Duration
}

// DebuginfodFromEnv is the configuration elfutils' clients read from the
// environment: DEBUGINFOD_URLS (space-separated; none: nil, no fetching),
// the cache under XDG_CACHE_HOME or ~/.cache.
func DebuginfodFromEnv() *Debuginfod {
	urls := strings.Fields(os.Getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		cache = filepath.Join(home, ".cache")
	}
	return &Debuginfod{URLs: urls, Cache: filepath.Join(cache, "ctxtop", "debuginfod")}
}

// debuginfod is the fetcher behind a Symbolizer.
type debuginfod struct {
	cfg Debuginfod

	mu     sync.Mutex
	fetch  map[string]*fetchState
	active int // fetches running, at most maxFetches
	queue  []string

	// roots replaces the host's CA certificates for https, in tests.
	roots *x509.CertPool
}

type fetchState struct {
	done    bool
	failed  time.Time // when no server had it
	lastErr error
}

// maxFetches bounds the fetches running at once: a first look at a host
// with 100 stripped libraries must not open 100 connections.
const maxFetches = 2

func newDebuginfod(cfg Debuginfod) *debuginfod {
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 1 << 30
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 512 << 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 90 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 10 * time.Minute
	}
	return &debuginfod{cfg: cfg, fetch: map[string]*fetchState{}}
}

func (d *debuginfod) path(buildID string) string {
	return filepath.Join(d.cfg.Cache, buildID, "debuginfo")
}

// lookup returns the cached file of buildID, or "" and whether a fetch is
// under way (started now if needed). It never waits for the network.
func (d *debuginfod) lookup(buildID string) (path string, pending bool) {
	if _, err := hex.DecodeString(buildID); err != nil || len(buildID) < 2 {
		return "", false
	}
	p := d.path(buildID)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		now := time.Now()
		os.Chtimes(p, now, now) // used: last out of the cache
		return p, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.fetch[buildID]; f != nil {
		switch {
		case !f.done:
			return "", true
		case time.Since(f.failed) < d.cfg.RetryAfter:
			return "", false
		}
	}
	d.fetch[buildID] = &fetchState{}
	d.queue = append(d.queue, buildID)
	d.startLocked()
	return "", true
}

// ready reports whether a fetch of buildID has finished since it was
// pending (successfully or not): the object should be read again.
func (d *debuginfod) ready(buildID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.fetch[buildID]
	return f == nil || f.done
}

func (d *debuginfod) startLocked() {
	for d.active < maxFetches && len(d.queue) > 0 {
		id := d.queue[0]
		d.queue = d.queue[1:]
		d.active++
		go d.run(id)
	}
}

func (d *debuginfod) run(buildID string) {
	err := d.get(buildID)
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.fetch[buildID]
	f.done, f.lastErr = true, err
	if err != nil {
		f.failed = time.Now()
	}
	d.active--
	d.startLocked()
}

// get fetches buildID's debug file from the first server that has it and
// keeps it in the cache, after checking that it is an ELF file of that
// build id.
func (d *debuginfod) get(buildID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.Timeout)
	defer cancel()
	if err := os.MkdirAll(filepath.Join(d.cfg.Cache, buildID), 0o700); err != nil {
		return err
	}
	var errs []string
	for _, u := range d.cfg.URLs {
		err := d.getFrom(ctx, strings.TrimRight(u, "/")+"/buildid/"+buildID+"/debuginfo", buildID)
		if err == nil {
			d.prune()
			return nil
		}
		errs = append(errs, err.Error())
	}
	os.Remove(filepath.Join(d.cfg.Cache, buildID)) // empty: nothing was kept
	return fmt.Errorf("debuginfod %s: %s", buildID, strings.Join(errs, "; "))
}

// getFrom asks one server. It speaks HTTP/1.1 (over TLS for https) on a
// connection of its own rather than through net/http's client: the
// binary links net/http's server for the exporter, and the client's
// transport (connection pools, HTTP/2, proxies, cookies) would add about
// 400 KB for one GET per build id. Redirects are not followed (debuginfod
// servers federate by proxying), proxies not used.
func (d *debuginfod) getFrom(ctx context.Context, rawURL, buildID string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	port := u.Port()
	switch {
	case u.Scheme == "http" && port == "":
		port = "80"
	case u.Scheme == "https" && port == "":
		port = "443"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: only http and https are supported", rawURL)
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), RootCAs: d.roots})
		if err := tc.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("%s: %v", rawURL, err)
		}
		conn = tc
	}
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: ctxtop\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return fmt.Errorf("%s: %v", rawURL, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return fmt.Errorf("%s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	url := rawURL
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if resp.ContentLength > d.cfg.MaxFileBytes {
		return fmt.Errorf("%s: %d bytes, over the %d-byte cap", url, resp.ContentLength, d.cfg.MaxFileBytes)
	}
	tmp, err := os.CreateTemp(filepath.Join(d.cfg.Cache, buildID), ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, d.cfg.MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	if n > d.cfg.MaxFileBytes {
		return fmt.Errorf("%s: over the %d-byte cap", url, d.cfg.MaxFileBytes)
	}
	if err := checkBuildID(tmp, buildID); err != nil {
		return fmt.Errorf("%s: %v", url, err)
	}
	return os.Rename(tmp.Name(), d.path(buildID))
}

// checkBuildID insists that r is an ELF file with the given build id.
func checkBuildID(r io.ReaderAt, buildID string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: ELF reader failed: %v", ErrParse, p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrParse, err)
	}
	if id := elfBuildID(ef); id != buildID {
		return fmt.Errorf("build id %q, not %s", id, buildID)
	}
	return nil
}

// prune removes the least recently used files until the cache fits its
// budget.
func (d *debuginfod) prune() {
	type file struct {
		path string
		size int64
		used time.Time
	}
	var files []file
	var total int64
	dirs, _ := os.ReadDir(d.cfg.Cache)
	for _, e := range dirs {
		p := filepath.Join(d.cfg.Cache, e.Name(), "debuginfo")
		if st, err := os.Stat(p); err == nil {
			files = append(files, file{p, st.Size(), st.ModTime()})
			total += st.Size()
		}
	}
	// sort.Slice, not slices.SortFunc: a generic sort compiled for one more
	// struct costs the binary a few KB (see refresh in symbolize.go).
	sort.Slice(files, func(i, j int) bool { return files[i].used.Before(files[j].used) })
	for len(files) > 1 && total > d.cfg.CacheBytes {
		os.Remove(files[0].path)
		os.Remove(filepath.Dir(files[0].path))
		total -= files[0].size
		files = files[1:]
	}
}
