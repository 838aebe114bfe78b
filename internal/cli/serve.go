package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/exporter"
	"github.com/ctxtop/ctxtop/internal/logfmt"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/webconfig"
)

// defaultListenAddress is loopback only: per-thread names are not for
// strangers. Port 10230: the Prometheus "Default port allocations" page has
// 9100-9999 fully allocated and continues from 10000 upwards; 10230 lies
// above the part of that continuation in use when it was chosen.
const defaultListenAddress = "127.0.0.1:10230"

type serveOptions struct {
	listen        []string
	webConfig     string
	telemetryPath string
	procRoot      string
	pids          pidListValue
	hot           float64
	groupBy       groupByValue
	maxGroups     int
	hostRoot      string
	cgroupRoot    string
	maxContainers int
	noContainers  bool
}

// groupByValue is name or pid.
type groupByValue string

func (g *groupByValue) String() string { return string(*g) }
func (g *groupByValue) Type() string   { return "name|pid" }

func (g *groupByValue) Set(s string) error {
	switch s {
	case string(exporter.GroupByName), string(exporter.GroupByPID):
		*g = groupByValue(s)
		return nil
	}
	return errors.New("want name or pid")
}

func newServeCmd() *cobra.Command {
	o := serveOptions{telemetryPath: "/metrics", procRoot: "/proc", hot: model.DefaultHotThreshold, groupBy: "name", maxGroups: 200, maxContainers: 500}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve context-switch counters to Prometheus",
		Long: `serve is a Prometheus exporter: host context switches, interrupts and
rescheduling IPIs, and per process group and thread group switch counters
summed over every thread, served at /metrics in the Prometheus text format
(OpenMetrics when the scraper asks for it).

It reads /proc when scraped and sleeps in between. A scrape within 0.5 s of
the last one is answered from the same sample.`,
		Example: `  ctxtop serve                                   listen on ` + defaultListenAddress + `
  ctxtop serve --web.listen-address=0.0.0.0:10230  every interface (mind who can read thread names)
  ctxtop serve --web.config.file=web.yml         TLS and basic auth (exporter-toolkit format)
  ctxtop serve -p 1234,5678 --group-by pid       one group per process`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyHostRoot(cmd, o.hostRoot, &o.procRoot, &o.cgroupRoot); err != nil {
				return err
			}
			return runServe(cmd.Context(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	f := cmd.Flags()
	f.SortFlags = false
	f.StringArrayVar(&o.listen, "web.listen-address", []string{defaultListenAddress}, "HOST:PORT to listen on; every interface only as 0.0.0.0:PORT or [::]:PORT; repeat for several")
	f.StringVar(&o.webConfig, "web.config.file", "", "exporter-toolkit web config file: TLS and basic auth")
	f.StringVar(&o.telemetryPath, "web.telemetry-path", "/metrics", "path under which to serve metrics")
	f.StringVar(&o.procRoot, "proc", "/proc", "procfs root to read")
	f.VarP(&o.pids, "pid", "p", "only these processes, comma-separated PIDs")
	f.Float64Var(&o.hot, "hot", model.DefaultHotThreshold, "switches/s at which a thread counts as hot (ctxtop_process_hot_threads)")
	f.Var(&o.groupBy, "group-by", "process groups by process name or pid")
	f.IntVar(&o.maxGroups, "max-groups", 200, "series per level (process groups, thread groups); the rest are summed into \"other\"")
	f.StringVar(&o.hostRoot, "host-root", "", hostRootHelp)
	f.StringVar(&o.cgroupRoot, "cgroup-root", "", "cgroup file system root, laid out like /sys/fs/cgroup (default: found in the procfs root's self/mountinfo)")
	f.IntVar(&o.maxContainers, "max-containers", 500, "containers with series of their own (ctxtop_container_*); the rest are summed into container=\"other\"")
	f.BoolVar(&o.noContainers, "no-containers", false, "no per-container series: read no cgroups")
	completeValues(cmd, "group-by", string(exporter.GroupByName), string(exporter.GroupByPID))
	return cmd
}

func runServe(ctx context.Context, o serveOptions) error {
	if !(o.hot > 0) {
		return fmt.Errorf("--hot must be a positive rate, got %v", o.hot)
	}
	if o.maxGroups < 1 {
		return fmt.Errorf("--max-groups must be at least 1, got %d", o.maxGroups)
	}
	for _, addr := range o.listen {
		if err := checkListenAddress(addr); err != nil {
			return err
		}
	}
	if o.maxContainers < 1 {
		return fmt.Errorf("--max-containers must be at least 1, got %d", o.maxContainers)
	}
	if !strings.HasPrefix(o.telemetryPath, "/") {
		return fmt.Errorf("--web.telemetry-path must start with /, got %q", o.telemetryPath)
	}
	if o.webConfig != "" {
		if _, err := webconfig.Load(o.webConfig); err != nil {
			return fmt.Errorf("--web.config.file %s: %s", o.webConfig, oneLine(err))
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// Sampling is one thread's work and scrapes take turns; one P
		// keeps the runtime from spreading its few wake-ups over more
		// threads.
		runtime.GOMAXPROCS(1)
	}
	restoreGC := sampler.QuietStartGC()
	exp, err := exporter.New(exporter.Config{
		// Cgroups are read only for the container series.
		Source: pipeline.ScrapeConfig{Sampler: sampler.Config{Root: o.procRoot, PIDs: o.pids, HotThreshold: o.hot,
			HostRoot: o.hostRoot, CgroupRoot: o.cgroupRoot, NoCgroups: o.noContainers}},
		GroupBy: exporter.GroupBy(o.groupBy), MaxGroups: o.maxGroups, MaxContainers: o.maxContainers,
	})
	restoreGC()
	if err != nil {
		return pidError(err, o.procRoot)
	}
	defer exp.Close()
	warnSkipped(os.Stderr, exp.Skipped())
	logger := logfmt.New(os.Stderr)
	handler, err := exporter.Handler(exp, exporter.HandlerOptions{TelemetryPath: o.telemetryPath, Version: version, Logger: logger})
	if err != nil {
		return err
	}

	// Listen before serving so a port in use is a plain error, not a log line.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, addr := range o.listen {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("--web.listen-address: %s", oneLine(err))
		}
		listeners = append(listeners, l)
	}

	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          logger.Std(),
	}
	done := make(chan error, 1)
	go func() { done <- webconfig.Serve(listeners, srv, o.webConfig, logger) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return oneLineErr(err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		return nil
	}
}

// checkListenAddress refuses an address that would listen on every
// interface without saying so: Go reads "" and ":9100" as every
// interface, "" on a random port too, while the default is loopback
// because thread names are not for strangers. Every interface is
// 0.0.0.0:PORT or [::]:PORT, written out.
func checkListenAddress(addr string) error {
	if addr == "" {
		return fmt.Errorf("--web.listen-address is empty, which would listen on every interface on a random port: give %s, or 0.0.0.0:PORT (or [::]:PORT) to mean every interface", defaultListenAddress)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--web.listen-address %q: want HOST:PORT, such as %s", addr, defaultListenAddress)
	}
	if host == "" {
		return fmt.Errorf("--web.listen-address %q names no host, which would listen on every interface: give 127.0.0.1:%s, or 0.0.0.0:%s (or [::]:%s) to mean every interface", addr, orPort(port), orPort(port), orPort(port))
	}
	if port == "" {
		return fmt.Errorf("--web.listen-address %q names no port, which would listen on a random one: give %sPORT", addr, net.JoinHostPort(host, ""))
	}
	return nil
}

// orPort is the port a user gave, or PORT for none.
func orPort(p string) string {
	if p == "" {
		return "PORT"
	}
	return p
}

// oneLine flattens a multi-line error (YAML errors are) for the one-line
// message the CLI prints.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func oneLineErr(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(oneLine(err))
}
