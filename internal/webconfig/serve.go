package webconfig

import (
	"crypto/tls"
	"encoding/hex"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/ctxtop/ctxtop/internal/logfmt"
)

// Serve serves srv on every listener, as the file at path says: plain HTTP
// when path is empty or configures no TLS, basic auth when it lists users.
// The file is read again for each request and each TLS handshake, so
// users, headers and certificates change without a restart. It returns
// when every listener has stopped, with the first error.
func Serve(listeners []net.Listener, srv *http.Server, path string, logger *logfmt.Logger) error {
	serve := func(l net.Listener) error { return srv.Serve(l) }
	if path != "" {
		c, err := Load(path)
		if err != nil {
			return err
		}
		h := &handler{path: path, next: srv.Handler, logger: logger, cache: map[string]bool{}}
		if h.next == nil {
			h.next = http.DefaultServeMux
		}
		if c.RateLimit.Interval != 0 {
			h.limiter = rate.NewLimiter(rate.Every(c.RateLimit.Interval), c.RateLimit.Burst)
		}
		srv.Handler = h
		cfg, err := c.TLS.tlsConfig()
		switch {
		case err == errNoTLS:
		case err != nil:
			return err
		default:
			if !c.HTTP.HTTP2 {
				// A non-nil empty map is how net/http is told: no h2.
				srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
			}
			cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				c, err := read(path)
				if err != nil {
					return nil, err
				}
				cfg, err := c.TLS.tlsConfig()
				if err != nil {
					return nil, err
				}
				// ServeTLS set the protocols on its own copy of the
				// config, not on this fresh one.
				cfg.NextProtos = []string{"http/1.1"}
				if c.HTTP.HTTP2 && srv.TLSNextProto["h2"] != nil {
					cfg.NextProtos = []string{"h2", "http/1.1"}
				}
				return cfg, nil
			}
			srv.TLSConfig = cfg
			serve = func(l net.Listener) error { return srv.ServeTLS(l, "", "") }
		}
	}
	var g errgroup.Group
	for _, l := range listeners {
		logger.Info("Listening on", "address", l.Addr().String(), "tls", srv.TLSConfig != nil)
		g.Go(func() error { return serve(l) })
	}
	return g.Wait()
}

// fakeHash is bcrypt of "fakepassword": an unknown user costs the same
// comparison as a known one, so timing does not tell which users exist.
const fakeHash = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"

// cacheSize bounds the remembered (user, hash, password) outcomes: bcrypt
// is slow on purpose, and a scraper sends the same credentials each time.
const cacheSize = 100

type handler struct {
	path    string
	next    http.Handler
	logger  *logfmt.Logger
	limiter *rate.Limiter

	mu    sync.Mutex // one bcrypt at a time: each is CPU-heavy
	cache map[string]bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := read(h.path)
	if err != nil {
		h.logger.Error("Unable to parse configuration", "err", err.Error())
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	if h.limiter != nil && !h.limiter.Allow() {
		http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		return
	}
	for k, v := range c.HTTP.Headers {
		w.Header().Set(k, v)
	}
	if len(c.Users) == 0 {
		h.next.ServeHTTP(w, r)
		return
	}
	if user, pass, ok := r.BasicAuth(); ok && h.allowed(c.Users, user, pass) {
		h.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("WWW-Authenticate", "Basic")
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

func (h *handler) allowed(users map[string]string, user, pass string) bool {
	hash, known := users[user]
	if !known {
		hash = fakeHash
	}
	key := hex.EncodeToString([]byte(user)) + ":" + hex.EncodeToString([]byte(hash)) + ":" + hex.EncodeToString([]byte(pass))
	h.mu.Lock()
	defer h.mu.Unlock()
	ok, cached := h.cache[key]
	if !cached {
		ok = known && bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
		if len(h.cache) >= cacheSize {
			h.evict()
		}
		h.cache[key] = ok
	}
	return ok && known
}

// evict drops a tenth of the cache at random: map order is skewed, not
// random, and dropping many at once spares doing it on every request.
func (h *handler) evict() {
	keys := make([]string, 0, len(h.cache))
	for k := range h.cache {
		keys = append(keys, k)
	}
	for range max(len(keys)/10, 1) {
		i := rand.IntN(len(keys))
		delete(h.cache, keys[i])
		keys[i] = keys[len(keys)-1]
		keys = keys[:len(keys)-1]
	}
}
