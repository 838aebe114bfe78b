package webconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/ctxtop/ctxtop/internal/logfmt"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir, under
// the relative names a config file would use.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ctxtop test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, dir, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const tlsKeys = "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"

// TestLoadRejects: what exporter-toolkit refuses is refused, each with an
// error naming the problem.
func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir)
	for _, tc := range []struct{ name, body, want string }{
		{"not YAML", "tls_server_config: [\n  : :\n", "yaml"},
		{"unknown key", tlsKeys + "frobnicate: 1\n", "frobnicate"},
		{"unknown nested key", "tls_server_config:\n  cert_fil: cert.pem\n", "cert_fil"},
		{"cert without key", "tls_server_config:\n  cert_file: cert.pem\n", "missing one of key or key_file"},
		{"key without cert", "tls_server_config:\n  key_file: key.pem\n", "missing one of cert or cert_file"},
		{"missing cert file", "tls_server_config:\n  cert_file: none.pem\n  key_file: key.pem\n", "cert_file"},
		{"key is not a key", "tls_server_config:\n  cert_file: cert.pem\n  key_file: cert.pem\n", "X509KeyPair"},
		{"bad hash", "basic_auth_users:\n  alice: not-a-bcrypt-hash\n", "alice"},
		{"bad client auth", tlsKeys + "  client_auth_type: Sometimes\n", "invalid ClientAuth"},
		{"CA without policy", tlsKeys + "  client_ca_file: cert.pem\n", "without a Client Auth Policy"},
		{"unknown cipher", tlsKeys + "  cipher_suites: [TLS_NOPE]\n", "unknown cipher"},
		{"unknown curve", tlsKeys + "  curve_preferences: [P999]\n", "unknown curve"},
		{"unknown version", tlsKeys + "  min_version: TLS9\n", "unknown TLS version"},
		{"header not allowed", "http_server_config:\n  headers:\n    Server: x\n", "can not be configured"},
		{"header value not allowed", "http_server_config:\n  headers:\n    X-Frame-Options: always\n", "Expected one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(write(t, dir, "web.yml", tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "absent.yml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want not exist", err)
	}
}

// TestLoad: the toolkit's defaults, names mapped to their crypto/tls IDs,
// and file paths taken relative to the config file.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir)
	c, err := Load(write(t, dir, "web.yml", tlsKeys+
		"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: cert.pem\n"+
		"  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n  curve_preferences: [X25519]\n"+
		"  max_version: TLS12\n  client_allowed_sans: [example.org]\n"+
		"rate_limit:\n  burst: 2\n  interval: 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		TLS: TLSConfig{
			CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
			ClientAuth: "RequireAndVerifyClientCert", ClientCAFile: filepath.Join(dir, "cert.pem"),
			CipherSuites:     []Cipher{Cipher(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)},
			CurvePreferences: []Curve{Curve(tls.X25519)},
			MinVersion:       tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			ClientAllowedSANs:        []string{"example.org"},
			PreferServerCipherSuites: true,
		},
		HTTP:      HTTPConfig{HTTP2: true},
		RateLimit: RateLimitConfig{Burst: 2, Interval: time.Second},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	cfg, err := c.TLS.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil || cfg.VerifyPeerCertificate == nil {
		t.Errorf("tls.Config: client auth %v, CAs %v, SAN check %v", cfg.ClientAuth, cfg.ClientCAs != nil, cfg.VerifyPeerCertificate != nil)
	}
	if _, err := Load(write(t, dir, "empty.yml", "")); err != nil {
		t.Errorf("an empty file: %v, want plain HTTP and no error", err)
	}
}

// serve runs Serve on a loopback port with the config body and returns its
// address; the server stops at the end of the test.
func serve(t *testing.T, dir, body string) string {
	t.Helper()
	path := write(t, dir, "web.yml", body)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "metrics "+r.Proto)
	})}
	done := make(chan error, 1)
	go func() { done <- Serve([]net.Listener{l}, srv, path, logfmt.New(io.Discard)) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v, want closed", err)
		}
	})
	return l.Addr().String()
}

func get(t *testing.T, client *http.Client, url, user, pass string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestServeBasicAuthAndHeaders: users need their password, an unknown user
// is refused like a wrong password, and the configured headers are sent.
func TestServeBasicAuthAndHeaders(t *testing.T) {
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, dir, "basic_auth_users:\n  prometheus: "+string(hash)+
		"\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n")
	url := "http://" + addr + "/metrics"
	for _, tc := range []struct {
		user, pass string
		want       int
	}{
		{"", "", http.StatusUnauthorized},
		{"prometheus", "wrong", http.StatusUnauthorized},
		{"mallory", "s3cret", http.StatusUnauthorized},
		{"prometheus", "s3cret", http.StatusOK},
		{"prometheus", "s3cret", http.StatusOK}, // from the cache
		{"prometheus", "wrong", http.StatusUnauthorized},
	} {
		resp, _ := get(t, http.DefaultClient, url, tc.user, tc.pass)
		if resp.StatusCode != tc.want {
			t.Errorf("%s:%s: %s, want %d", tc.user, tc.pass, resp.Status, tc.want)
		}
		if got := resp.Header.Get("X-Frame-Options"); got != "deny" {
			t.Errorf("X-Frame-Options %q, want deny", got)
		}
		if tc.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") != "Basic" {
			t.Errorf("401 without WWW-Authenticate: Basic")
		}
	}
}

// TestServeRateLimit: past the burst, requests are turned away until the
// interval refills it.
func TestServeRateLimit(t *testing.T) {
	addr := serve(t, t.TempDir(), "rate_limit:\n  burst: 2\n  interval: 1h\n")
	var codes []int
	for range 3 {
		resp, _ := get(t, http.DefaultClient, "http://"+addr+"/", "", "")
		codes = append(codes, resp.StatusCode)
	}
	if diff := cmp.Diff([]int{200, 200, 429}, codes); diff != "" {
		t.Errorf("status codes (-want +got):\n%s", diff)
	}
}

// TestServeTLS: with a certificate the server speaks only TLS, HTTP/2
// unless the file turns it off, and a certificate replaced on disk is
// served from the next connection on.
func TestServeTLS(t *testing.T) {
	for _, tc := range []struct {
		name, extra, proto string
	}{
		{"http2 by default", "", "HTTP/2.0"},
		{"http2 off", "http_server_config:\n  http2: false\n", "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pool := selfSigned(t, dir)
			addr := serve(t, dir, tlsKeys+tc.extra)
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, DisableKeepAlives: true}}
			resp, body := get(t, client, "https://"+addr+"/", "", "")
			if resp.StatusCode != http.StatusOK || body != "metrics "+tc.proto {
				t.Errorf("over TLS: %s %q, want 200 %q", resp.Status, body, "metrics "+tc.proto)
			}
			if resp, err := http.Get("http://" + addr + "/"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("plain HTTP served with TLS configured")
				}
			}
			// A new certificate: the old pool no longer trusts the server.
			pool2 := selfSigned(t, dir)
			if _, err := client.Get("https://" + addr + "/"); err == nil {
				t.Errorf("the replaced certificate is still served")
			}
			client.Transport.(*http.Transport).TLSClientConfig.RootCAs = pool2
			if resp, _ := get(t, client, "https://"+addr+"/", "", ""); resp.StatusCode != http.StatusOK {
				t.Errorf("with the new certificate: %s", resp.Status)
			}
		})
	}
}
