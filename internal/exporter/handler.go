package exporter

import (
	"html"
	"log/slog"
	"net/http"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
		mux.Handle("/", landingPage(o.Version, o.TelemetryPath))
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

// landingPage is the page at / (only; anything else is not found), in the
// shape of exporter-toolkit's: name, what it exports, version, a link to the
// metrics. It is written out rather than through a template: a reachable
// template executor keeps every exported method of every type in the binary.
func landingPage(version, telemetryPath string) http.Handler {
	const name = "ctxtop"
	page := `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>` + name + `</title>
<style>body{font-family:sans-serif;margin:0}header{background:#e6522c;color:#fff;padding:.5em 1em}main{padding:0 1em}</style>
</head>
<body>
<header><h1>` + name + `</h1></header>
<main>
<h2>Context switches per host, process group and thread group</h2>
`
	if version != "" {
		page += "<div>Version: " + html.EscapeString(version) + "</div>\n"
	}
	page += `<ul><li><a href="` + html.EscapeString(telemetryPath) + `">Metrics</a></li></ul>
</main>
</body>
</html>
`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = w.Write([]byte(page))
	})
}
