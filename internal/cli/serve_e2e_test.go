package cli_test

import (
	"bytes"
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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

func TestServeBadInputIsOneLineAndNonZero(t *testing.T) {
	bin := testutil.Binary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notYAML := write("junk.yml", "tls_server_config: [\n  : :\n")
	unknownKey := write("unknown.yml", "tls_server_config:\n  cert_file: a.pem\n  key_file: b.pem\nfrobnicate: 1\n")
	missingCert := write("nocert.yml", "tls_server_config:\n  cert_file: "+filepath.Join(dir, "none.pem")+"\n  key_file: "+filepath.Join(dir, "none.key")+"\n")
	badHash := write("badauth.yml", "basic_auth_users:\n  alice: not-a-bcrypt-hash\n")
	free := "--web.listen-address=127.0.0.1:0"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"port in use", []string{"--web.listen-address", busy.Addr().String()}, "address already in use"},
		{"bad address", []string{"--web.listen-address", "127.0.0.1:99999"}, "listen-address"},
		{"web config missing", []string{free, "--web.config.file", filepath.Join(dir, "nope.yml")}, "web.config.file"},
		{"web config not YAML", []string{free, "--web.config.file", notYAML}, "web.config.file"},
		{"web config unknown key", []string{free, "--web.config.file", unknownKey}, "frobnicate"},
		{"web config missing cert", []string{free, "--web.config.file", missingCert}, "web.config.file"},
		{"web config bad password hash", []string{free, "--web.config.file", badHash}, "web.config.file"},
		{"unknown group-by", []string{free, "--group-by", "tid"}, "group-by"},
		{"zero max-groups", []string{free, "--max-groups", "0"}, "max-groups"},
		{"bad hot", []string{free, "--hot", "0"}, "hot"},
		{"relative telemetry path", []string{free, "--web.telemetry-path", "metrics"}, "telemetry-path"},
		{"missing pid", []string{free, "-p", "999999999"}, "no such process"},
		{"not a procfs", []string{free, "--proc", dir}, "not a procfs"},
		{"stray argument", []string{free, "extra"}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"serve"}, tt.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still running after 10 s; stderr:\n%s", stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit = %v, want a non-zero exit", err)
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ctxtop: ") {
				t.Errorf("stderr = %q, want exactly one line starting with \"ctxtop: \"", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", msg, tt.want)
			}
		})
	}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
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
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// --web.config.file turns on TLS and basic auth through exporter-toolkit.
func TestServeTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "web.yml")
	body := "tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile +
		"\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testutil.StartServe(t, "--web.listen-address=127.0.0.1:0", "--web.config.file", cfg,
		"--proc", filepath.Join(testutil.RepoRoot(), "testdata", "proc"))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}

	get := func(url, user, pass string) (int, string) {
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
		return resp.StatusCode, string(b)
	}
	if code, _ := get("https://"+addr+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", code)
	}
	if code, _ := get("https://"+addr+"/metrics", "prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("with a wrong password: %d, want 401", code)
	}
	code, metrics := get("https://"+addr+"/metrics", "prometheus", "s3cret")
	if code != http.StatusOK || !strings.Contains(metrics, "ctxtop_context_switches_total 2.727877e+06") {
		t.Errorf("with credentials: %d\n%.300s", code, metrics)
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP served metrics with TLS configured")
		}
	}
}

// The default address is loopback: thread names are not for other hosts.
func TestServeDefaultsToLoopback(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --help: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `repeat for several (default [127.0.0.1:10230])`) {
		t.Errorf("serve --help does not show the loopback default:\n%s", out)
	}
}
