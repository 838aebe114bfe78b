// Package webconfig reads the exporter-toolkit web configuration file
// (--web.config.file: TLS, client certificates, basic auth, headers, rate
// limit) and serves HTTP by it.
//
// It follows github.com/prometheus/exporter-toolkit/web v0.20 (Apache
// License 2.0): the same keys, defaults, checks and per-request reload, so
// a file written for any Prometheus exporter works here. It exists because
// that package imports prometheus/common/config, whose HTTP client side
// pulls in OAuth2, JWT and golang.org/x/net/trace; the last registers
// html/template pages at init, and a reachable template executor stops the
// linker from dropping unused methods anywhere in the binary. Together
// that was 4 MB of a 19.5 MB binary for a server that needs none of it.
// For the same reason it reads the file's YAML itself (yaml.go), as
// go.yaml.in/yaml/v2 would, which kept that library's 229 KB out too.
package webconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Config is the file's content, keys as in exporter-toolkit.
type Config struct {
	TLS       TLSConfig         `yaml:"tls_server_config"`
	HTTP      HTTPConfig        `yaml:"http_server_config"`
	RateLimit RateLimitConfig   `yaml:"rate_limit"`
	Users     map[string]string `yaml:"basic_auth_users"` // user: bcrypt hash
}

// TLSConfig is tls_server_config. Relative file paths are relative to the
// configuration file.
type TLSConfig struct {
	Cert              string     `yaml:"cert"`
	Key               string     `yaml:"key"`
	ClientCA          string     `yaml:"client_ca"`
	CertFile          string     `yaml:"cert_file"`
	KeyFile           string     `yaml:"key_file"`
	ClientAuth        string     `yaml:"client_auth_type"`
	ClientCAFile      string     `yaml:"client_ca_file"`
	CipherSuites      []Cipher   `yaml:"cipher_suites"`
	CurvePreferences  []Curve    `yaml:"curve_preferences"`
	MinVersion        TLSVersion `yaml:"min_version"`
	MaxVersion        TLSVersion `yaml:"max_version"`
	ClientAllowedSANs []string   `yaml:"client_allowed_sans"`
	// Accepted so existing files load; tls.Config has ignored it since
	// Go 1.17.
	PreferServerCipherSuites bool `yaml:"prefer_server_cipher_suites"`
}

// HTTPConfig is http_server_config.
type HTTPConfig struct {
	HTTP2   bool              `yaml:"http2"`
	Headers map[string]string `yaml:"headers"`
}

// RateLimitConfig is rate_limit: no limit when Interval is zero.
type RateLimitConfig struct {
	Burst    int           `yaml:"burst"`
	Interval time.Duration `yaml:"interval"`
}

// errNoTLS says the file configures no TLS: serve plain HTTP (with its
// users and headers, if any).
var errNoTLS = errors.New("TLS config is not present")

// Load reads and checks the file: YAML (yaml.go) with no unknown key, headers from
// the allowed set, every password a bcrypt hash, and, when TLS is
// configured, a certificate and key that load.
func Load(path string) (*Config, error) {
	c, err := read(path)
	if err != nil {
		return nil, err
	}
	for user, hash := range c.Users {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("basic_auth_users %s: %w", user, err)
		}
	}
	if _, err := c.TLS.tlsConfig(); err != nil && err != errNoTLS {
		return nil, err
	}
	return c, nil
}

// read parses the file with exporter-toolkit's defaults: TLS 1.2 to 1.3,
// HTTP/2 on (defaultConfig).
func read(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := defaultConfig()
	if err := unmarshalYAML(b, c); err != nil {
		return nil, err
	}
	if err := checkHeaders(c.HTTP.Headers); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for _, p := range []*string{&c.TLS.CertFile, &c.TLS.KeyFile, &c.TLS.ClientCAFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return c, nil
}

// defaultConfig is what a file leaves unset, as in exporter-toolkit.
func defaultConfig() *Config {
	return &Config{
		TLS:  TLSConfig{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13, PreferServerCipherSuites: true},
		HTTP: HTTPConfig{HTTP2: true},
	}
}

// allowedHeaders are the response headers a file may set, and the values
// each may take (nil: any).
var allowedHeaders = map[string][]string{
	"Strict-Transport-Security": nil,
	"X-Content-Type-Options":    {"nosniff"},
	"X-Frame-Options":           {"deny", "sameorigin"},
	"X-XSS-Protection":          nil,
	"Content-Security-Policy":   nil,
}

func checkHeaders(headers map[string]string) error {
	for k, v := range headers {
		values, ok := allowedHeaders[k]
		if !ok {
			return fmt.Errorf("HTTP header %q can not be configured", k)
		}
		if len(values) > 0 && !slices.Contains(values, v) {
			return fmt.Errorf("invalid value for %s. Expected one of: %q, but got: %q", k, values, v)
		}
	}
	return nil
}

func (t *TLSConfig) enabled() bool {
	return t.CertFile != "" || t.Cert != "" || t.KeyFile != "" || t.Key != "" ||
		t.ClientCAFile != "" || t.ClientCA != "" || t.ClientAuth != ""
}

// certificate reads the key pair afresh: a renewed certificate is served
// from the next connection on, without a restart.
func (t *TLSConfig) certificate() (*tls.Certificate, error) {
	cert, key := []byte(t.Cert), []byte(t.Key)
	var err error
	if t.CertFile != "" {
		if cert, err = os.ReadFile(t.CertFile); err != nil {
			return nil, fmt.Errorf("failed to read cert_file (%s): %s", t.CertFile, err)
		}
	}
	if t.KeyFile != "" {
		if key, err = os.ReadFile(t.KeyFile); err != nil {
			return nil, fmt.Errorf("failed to read key_file (%s): %s", t.KeyFile, err)
		}
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("failed to load X509KeyPair: %w", err)
	}
	return &pair, nil
}

// tlsConfig is the server's tls.Config, or errNoTLS.
func (t *TLSConfig) tlsConfig() (*tls.Config, error) {
	if !t.enabled() {
		return nil, errNoTLS
	}
	if t.CertFile == "" && t.Cert == "" {
		return nil, errors.New("missing one of cert or cert_file")
	}
	if t.KeyFile == "" && t.Key == "" {
		return nil, errors.New("missing one of key or key_file")
	}
	if _, err := t.certificate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion:     uint16(t.MinVersion),
		MaxVersion:     uint16(t.MaxVersion),
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return t.certificate() },
	}
	for _, c := range t.CipherSuites {
		cfg.CipherSuites = append(cfg.CipherSuites, uint16(c))
	}
	for _, c := range t.CurvePreferences {
		cfg.CurvePreferences = append(cfg.CurvePreferences, tls.CurveID(c))
	}
	switch {
	case t.ClientCAFile != "":
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AppendCertsFromPEM(pem)
	case t.ClientCA != "":
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AppendCertsFromPEM([]byte(t.ClientCA))
	}
	if t.ClientAllowedSANs != nil {
		cfg.VerifyPeerCertificate = t.verifySANs
	}
	switch t.ClientAuth {
	case "", "NoClientCert":
		cfg.ClientAuth = tls.NoClientCert
	case "RequestClientCert":
		cfg.ClientAuth = tls.RequestClientCert
	case "RequireAnyClientCert", "RequireClientCert": // the older name
		cfg.ClientAuth = tls.RequireAnyClientCert
	case "VerifyClientCertIfGiven":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "RequireAndVerifyClientCert":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, errors.New("invalid ClientAuth: " + t.ClientAuth)
	}
	if cfg.ClientCAs != nil && cfg.ClientAuth == tls.NoClientCert {
		return nil, errors.New("client CA's have been configured without a Client Auth Policy")
	}
	return cfg, nil
}

// verifySANs accepts a client certificate naming one of the allowed SANs.
func (t *TLSConfig) verifySANs(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return errors.New("no client certificate")
	}
	cert, err := x509.ParseCertificate(raw[0]) // the client's own comes first
	if err != nil {
		return fmt.Errorf("error parsing client certificate: %s", err)
	}
	sans := slices.Concat(cert.DNSNames, cert.EmailAddresses)
	for _, ip := range cert.IPAddresses {
		sans = append(sans, ip.String())
	}
	for _, u := range cert.URIs {
		sans = append(sans, u.String())
	}
	for _, s := range sans {
		if slices.Contains(t.ClientAllowedSANs, s) {
			return nil
		}
	}
	return fmt.Errorf("could not find allowed SANs in client cert, found: %v", t.ClientAllowedSANs)
}

// Cipher is a cipher suite, by its Go name (TLS_AES_128_GCM_SHA256).
type Cipher uint16

func (c *Cipher) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	for _, cs := range tls.CipherSuites() {
		if cs.Name == s {
			*c = Cipher(cs.ID)
			return nil
		}
	}
	return errors.New("unknown cipher: " + s)
}

// Curve is a key exchange curve, by its Go name (X25519, CurveP256).
type Curve tls.CurveID

var curves = map[string]Curve{
	"CurveP256": Curve(tls.CurveP256),
	"CurveP384": Curve(tls.CurveP384),
	"CurveP521": Curve(tls.CurveP521),
	"X25519":    Curve(tls.X25519),
}

func (c *Curve) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	id, ok := curves[s]
	if !ok {
		return errors.New("unknown curve: " + s)
	}
	*c = id
	return nil
}

// TLSVersion is TLS10 to TLS13.
type TLSVersion uint16

var tlsVersions = map[string]TLSVersion{
	"TLS13": tls.VersionTLS13,
	"TLS12": tls.VersionTLS12,
	"TLS11": tls.VersionTLS11,
	"TLS10": tls.VersionTLS10,
}

func (v *TLSVersion) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	id, ok := tlsVersions[s]
	if !ok {
		return errors.New("unknown TLS version: " + s)
	}
	*v = id
	return nil
}
