package exporter

import (
	"compress/gzip"
	"errors"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxtop/ctxtop/internal/exposition"
	"github.com/ctxtop/ctxtop/internal/logfmt"
)

// HandlerOptions configure the HTTP side.
type HandlerOptions struct {
	// TelemetryPath is where metrics are served, "/metrics" by default.
	TelemetryPath string
	// Version is shown on the landing page.
	Version string
	Logger  *logfmt.Logger
}

// maxInFlight bounds the scrapes served at once. Scrapes are serialised on
// the sampler anyway; a pile-up of slow scrapers should be refused, not
// queued without bound.
const maxInFlight = 8

// The handler's own series, named and described as client_golang's promhttp
// handler has them (dashboards and the README's series count know them).
// No Go runtime or process collector: process_open_fds would list
// /proc/self/fd, one entry per watched thread, every scrape; the exporter's
// own CPU and switches are in ctxtop_exporter_*.
var (
	descHandlerErrors = exposition.NewDesc("promhttp_metric_handler_errors_total",
		"Total number of internal errors encountered by the promhttp metric handler.", exposition.Counter, "cause")
	descHandlerInFlight = exposition.NewDesc("promhttp_metric_handler_requests_in_flight",
		"Current number of scrapes being served.", exposition.Gauge)
	descHandlerRequests = exposition.NewDesc("promhttp_metric_handler_requests_total",
		"Total number of scrapes by HTTP status code.", exposition.Counter, "code")
)

// statusCodes are the answers a scrape can get, each with a series from the
// start.
var statusCodes = []int{http.StatusOK, http.StatusInternalServerError, http.StatusServiceUnavailable}

var (
	causeEncoding  = []string{"encoding"}
	causeGathering = []string{"gathering"}
	codeLabels     = [][]string{{"200"}, {"500"}, {"503"}}
)

// metricsHandler serves the exposition.
type metricsHandler struct {
	e        *Exporter
	logger   *logfmt.Logger
	inFlight chan struct{}
	// Counted as client_golang counts them: requests by status code (the
	// in-flight gauge and the count include scrapes refused with 503),
	// errors while collecting (gathering) or writing the answer (encoding).
	serving                    atomic.Int64
	requests                   [3]atomic.Uint64
	encodeErrors, gatherErrors atomic.Uint64
	pool                       sync.Pool // of *[]exposition.Metric
	gzips                      sync.Pool // of *gzip.Writer
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serving.Add(1)
	defer h.serving.Add(-1)
	code := h.serve(w, r)
	for i, c := range statusCodes {
		if c == code {
			h.requests[i].Add(1)
		}
	}
}

func (h *metricsHandler) serve(w http.ResponseWriter, r *http.Request) int {
	select {
	case h.inFlight <- struct{}{}:
		defer func() { <-h.inFlight }()
	default:
		http.Error(w, "Limit of concurrent requests reached ("+strconv.Itoa(maxInFlight)+"), try again later.", http.StatusServiceUnavailable)
		return http.StatusServiceUnavailable
	}
	buf, _ := h.pool.Get().(*[]exposition.Metric)
	if buf == nil {
		buf = new([]exposition.Metric)
	}
	defer func() {
		clear(*buf) // drop the label slices of groups gone by the next scrape
		*buf = (*buf)[:0]
		h.pool.Put(buf)
	}()
	ms, err := h.e.Collect((*buf)[:0])
	*buf = ms
	if err != nil {
		h.gatherErrors.Add(1)
		h.logger.Error("error gathering metrics: " + err.Error())
		if !errors.Is(err, ErrPartial) {
			httpError(w, err)
			return http.StatusInternalServerError
		}
	}
	ms = h.appendOwn(ms)
	*buf = ms
	if names := r.URL.Query()["name[]"]; len(names) > 0 {
		ms = filterNames(ms, names)
	}
	f := exposition.Negotiate(r.Header.Get("Accept"))
	w.Header().Add("Vary", "Accept")
	w.Header().Add("Vary", "Accept-Encoding")
	w.Header().Set("Content-Type", f.ContentType())
	out := io.Writer(w)
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		// Write checks the metrics before it writes a byte, so an invalid
		// set still gets its plain 500 (httpError drops this header) and
		// the unused gzip writer never writes its header.
		w.Header().Set("Content-Encoding", "gzip")
		gz, _ := h.gzips.Get().(*gzip.Writer)
		if gz == nil {
			// The standard library's gzip, linked anyway by net/http,
			// at best speed: the default level was half of a scrape's
			// work besides reading /proc.
			gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
		} else {
			gz.Reset(w)
		}
		defer h.gzips.Put(gz)
		out = gz
		defer func() {
			if w.Header().Get("Content-Encoding") == "gzip" {
				_ = gz.Close()
			}
		}()
	}
	if err := exposition.Write(out, f, ms); err != nil {
		if errors.Is(err, exposition.ErrInvalid) {
			h.gatherErrors.Add(1)
			h.logger.Error("error gathering metrics: " + err.Error())
			httpError(w, err)
			return http.StatusInternalServerError
		}
		// The scraper went away: nothing more to tell it.
		h.encodeErrors.Add(1)
		h.logger.Error("error encoding and sending metric family: " + err.Error())
	}
	return http.StatusOK
}

// appendOwn appends the handler's series; this scrape is in flight and not
// yet counted.
func (h *metricsHandler) appendOwn(ms []exposition.Metric) []exposition.Metric {
	ms = append(ms,
		exposition.Metric{Desc: descHandlerErrors, Labels: causeEncoding, Value: float64(h.encodeErrors.Load())},
		exposition.Metric{Desc: descHandlerErrors, Labels: causeGathering, Value: float64(h.gatherErrors.Load())},
		exposition.Metric{Desc: descHandlerInFlight, Value: float64(h.serving.Load())})
	for i := range statusCodes {
		ms = append(ms, exposition.Metric{Desc: descHandlerRequests, Labels: codeLabels[i], Value: float64(h.requests[i].Load())})
	}
	return ms
}

// filterNames keeps the families named in a name[] query, as promhttp does.
func filterNames(ms []exposition.Metric, names []string) []exposition.Metric {
	kept := ms[:0]
	for _, m := range ms {
		for _, n := range names {
			if m.Desc.Name() == n {
				kept = append(kept, m)
				break
			}
		}
	}
	return kept
}

// httpError answers 500 with the error, uncompressed, in promhttp's words.
func httpError(w http.ResponseWriter, err error) {
	w.Header().Del("Content-Encoding")
	http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
}

// Handler serves the metrics at o.TelemetryPath (text format, OpenMetrics
// or delimited protobuf as the scraper's Accept header asks, gzip when it
// accepts it) and a landing page at / linking to them. More than 8 scrapes
// at once get 503; methods other than GET and HEAD 405.
func Handler(e *Exporter, o HandlerOptions) (http.Handler, error) {
	if o.TelemetryPath == "" {
		o.TelemetryPath = "/metrics"
	}
	mux := http.NewServeMux()
	metrics := &metricsHandler{e: e, logger: o.Logger, inFlight: make(chan struct{}, maxInFlight)}
	mux.Handle(o.TelemetryPath, metrics)
	if o.TelemetryPath != "/" {
		mux.Handle("/", landingPage(o.Version, o.TelemetryPath))
	}
	return readOnly(mux), nil
}

// acceptsGzip tells whether an Accept-Encoding header takes gzip: listed
// by name or as *, without q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		if q == "q=0" || strings.HasPrefix(q, "q=0.") && strings.Trim(q[4:], "0") == "" {
			return false
		}
		return true
	}
	return false
}

// readOnly answers 405 to any method but GET and HEAD, on every path: the
// exporter only serves reads, and a POST or DELETE would otherwise be
// taken for a scrape (and spend a pass over /proc on it).
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
