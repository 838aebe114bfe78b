package exporter

import (
	"log/slog"
	"net/http"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// HandlerOptions configure the HTTP side.
type HandlerOptions struct {
	// TelemetryPath is where metrics are served, "/metrics" by default.
	TelemetryPath string
	// Version is shown on the landing page.
	Version string
	Logger  *slog.Logger
}

// Registry returns a registry holding only the exporter: no Go runtime or
// process collector. The process collector would count the sampler's open
// files by listing /proc/self/fd, one entry per watched thread, every scrape;
// the exporter's own CPU and switches are in ctxtop_exporter_* instead.
func Registry(e *Exporter) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(e); err != nil {
		return nil, err
	}
	return reg, nil
}

// Handler serves the metrics at o.TelemetryPath (text format, or OpenMetrics
// when the scraper asks for it) and a landing page at / linking to them.
// More than 8 scrapes at once get 503; methods other than GET and HEAD 405.
func Handler(reg *prometheus.Registry, o HandlerOptions) (http.Handler, error) {
	if o.TelemetryPath == "" {
		o.TelemetryPath = "/metrics"
	}
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelError),
		EnableOpenMetrics: true,
		// Scrapes are serialised on the sampler anyway; a pile-up of
		// slow scrapers should be refused, not queued without bound.
		MaxRequestsInFlight: 8,
		Registry:            reg,
		// Compressed below, faster: promhttp's gzip at the default level
		// was half of a scrape's work besides reading /proc.
		DisableCompression: true,
	})
	compress, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzip.BestSpeed))
	if err != nil {
		return nil, err
	}
	mux.Handle(o.TelemetryPath, compress(promhttp.InstrumentMetricHandler(reg, metrics)))
	if o.TelemetryPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "ctxtop",
			Description: "Context switches per host, process group and thread group",
			Version:     o.Version,
			Links: []web.LandingLinks{{
				Address: o.TelemetryPath,
				Text:    "Metrics",
			}},
			Profiling: "false",
		})
		if err != nil {
			return nil, err
		}
		mux.Handle("/", landing)
	}
	return readOnly(mux), nil
}

// readOnly answers 405 to any method but GET and HEAD, on every path: the
// exporter only serves reads, and promhttp would otherwise take a POST or
// DELETE for a scrape (and spend a pass over /proc on it).
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}
