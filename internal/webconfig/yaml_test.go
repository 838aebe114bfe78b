package webconfig

import (
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v2"
)

// yaml.v2, which read these files before, is the oracle here: what the
// parser accepts, yaml.v2's UnmarshalStrict accepts into the same Config,
// and what yaml.v2 accepts within the subset, the parser accepts alike.

// bothWays decodes src into the defaults here and with yaml.v2.
func bothWays(src []byte) (ours *Config, err error, theirs *Config, theirsErr error) {
	ours, theirs = defaultConfig(), defaultConfig()
	err = unmarshalYAML(src, ours)
	theirsErr = yaml.UnmarshalStrict(src, theirs)
	return ours, err, theirs, theirsErr
}

func isUnsupported(err error) bool {
	var e *yamlError
	return errors.As(err, &e) && e.unsupported
}

// indentedPEM is a PEM block of n bytes, each line indented as under a
// key in a file.
func indentedPEM(typ string, n int, indent string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	p := strings.TrimSuffix(string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})), "\n")
	return indent + strings.ReplaceAll(p, "\n", "\n"+indent) + "\n"
}

const (
	hashAlice = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"
	hashBob   = "$2a$12$Wq4bL1m0pHk9yE2fV8s3OeS9dKx7tQ1cZ4nR6uA2jB5vC8wD0eF1G"
)

// realFiles are web config files as people write them: the toolkit's
// documented example and test files, and this repository's own tests.
var realFiles = map[string]string{
	"toolkit example": "# TLS and basic authentication configuration example.\n#\n" +
		"# Additionally, a certificate and a key file are needed.\n" +
		"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\n" +
		"# Usernames and passwords required to connect.\n# Passwords are hashed with bcrypt.\n" +
		"basic_auth_users:\n  alice: " + hashAlice + "\n  bob: " + hashBob + "\n",
	"inline key pair": "tls_server_config:\n  cert: |\n" + indentedPEM("CERTIFICATE", 300, "    ") +
		"  key: |\n" + indentedPEM("PRIVATE KEY", 200, "    ") +
		"  client_auth_type: \"VerifyClientCertIfGiven\"", // no final line break
	"inline client CA, kept and stripped": "tls_server_config:\n  client_ca: |+\n" + indentedPEM("CERTIFICATE", 90, "      ") +
		"\n  cert: |-\n" + indentedPEM("CERTIFICATE", 60, "   ") + "  key: >\n" + indentedPEM("EC PRIVATE KEY", 40, "   "),
	"all ciphers": "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n" +
		"  client_auth_type: \"VerifyClientCertIfGiven\"\n  cipher_suites:\n" +
		"  - TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\n  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n" +
		"  - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\n  - TLS_AES_128_GCM_SHA256\n" +
		"  - TLS_CHACHA20_POLY1305_SHA256\n  - TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA\n",
	"users": "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\nbasic_auth_users:\n" +
		"  alice: " + hashAlice + "\n  bob: " + hashBob + "\n  carol: '" + hashAlice + "'\n  \"dave\": \"" + hashBob + "\"\n",
	"headers": "http_server_config:\n  headers:\n    X-Frame-Options: deny\n" +
		"    Strict-Transport-Security: max-age=31536000; includeSubDomains\n    X-Content-Type-Options: nosniff\n" +
		"    X-XSS-Protection: 1\n    Content-Security-Policy: \"default-src 'self' *.test.example.net\"\n",
	"rate limit quoted":  "rate_limit:\n  interval: \"1s\"\n  burst: 0\n",
	"rate limit plain":   "rate_limit:\n  interval: 1m30s # a Go duration\n  burst: 10\n",
	"rate limit numbers": "rate_limit:\n  interval: 5\n  burst: 0x10\n",
	"client SANs": "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n" +
		"  client_auth_type: \"RequireAndVerifyClientCert\"\n  client_ca_file: \"client.pem\"\n" +
		"  client_allowed_sans:\n    - \"one\"\n    - 'two'\n    - three.example.org\n",
	"some curves": "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n" +
		"  min_version: TLS13\n  curve_preferences:\n  - CurveP521\n  - X25519\n",
	"no HTTP/2":                       "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nhttp_server_config:\n  http2: false\n",
	"repo TestLoad":                   tlsKeys + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: cert.pem\n" + "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n  curve_preferences: [X25519]\n" + "  max_version: TLS12\n  client_allowed_sans: [example.org]\n" + "rate_limit:\n  burst: 2\n  interval: 1s\n",
	"repo basic auth":                 "basic_auth_users:\n  prometheus: " + hashAlice + "\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n",
	"repo rate limit":                 "rate_limit:\n  burst: 2\n  interval: 1h\n",
	"empty":                           "",
	"comments only":                   "# nothing configured yet\n\n   # indented comment\n",
	"document start":                  "---\n" + tlsKeys,
	"start and comment":               "--- # web config\nrate_limit: {burst: 3, interval: 2s}\n",
	"only a start":                    "---\n",
	"null document":                   "~\n",
	"CRLF":                            "tls_server_config:\r\n  cert_file: a.pem\r\n  key_file: b.pem\r\n  cert: |\r\n    line one\r\n    line two\r\n",
	"flow over lines":                 "tls_server_config:\n  cipher_suites: [\n    TLS_AES_128_GCM_SHA256,  # first\n    \"TLS_AES_256_GCM_SHA384\",\n  ]\n  curve_preferences: [ X25519 , CurveP256 ]\n",
	"flow mapping":                    "http_server_config: {http2: no, headers: {X-Frame-Options: sameorigin, 'X-XSS-Protection': \"1; mode=block\"}}\n",
	"yaml 1.1 bools on":               "tls_server_config:\n  prefer_server_cipher_suites: yes\nhttp_server_config:\n  http2: On\n",
	"yaml 1.1 bools":                  "http_server_config:\n  http2: off\ntls_server_config:\n  prefer_server_cipher_suites: No\n",
	"nulls":                           "tls_server_config:\nhttp_server_config: ~\nrate_limit: null\nbasic_auth_users:\n",
	"empty collections":               "basic_auth_users: {}\ntls_server_config:\n  client_allowed_sans: []\n  cipher_suites:\n",
	"quoted escapes":                  "tls_server_config:\n  cert_file: \"dir\\tx\\u00e9\\x41\\\\\\\"\"\n  key_file: 'it''s # not a comment'\n  client_ca_file: a#b\n",
	"keys with spaces":                "tls_server_config :\n  cert_file : x.pem   \n  key_file:\ty.pem\n",
	"sequence items null and numbers": "tls_server_config:\n  client_allowed_sans:\n  -\n  - 10.0.0.1\n  - 1e3\n  - true\n  - # empty\n",
	"deeper indentation":              "tls_server_config:\n      cert_file: a\n      key_file: b\n      client_allowed_sans:\n          - x\n          -   y\n",
	"indented root":                   "  rate_limit:\n    burst: 1\n",
	"folded text":                     "http_server_config:\n  headers:\n    Content-Security-Policy: >-\n      default-src 'self';\n      img-src *\n\n      more\n",
	"literal with indicator":          "tls_server_config:\n  cert: |2\n     indented one more\n    back\n",
	"BOM":                             "\ufeffrate_limit:\n  burst: 4\n",
	"unicode":                         "basic_auth_users:\n  jöhn: " + hashAlice + "\n  \"名前\": " + hashBob + "\n",
}

// TestYAMLMatchesV2 holds the parser to yaml.v2 on real files.
func TestYAMLMatchesV2(t *testing.T) {
	for name, body := range realFiles {
		t.Run(name, func(t *testing.T) {
			ours, err, theirs, theirsErr := bothWays([]byte(body))
			if theirsErr != nil {
				t.Fatalf("yaml.v2 refuses the file: %v", theirsErr)
			}
			if err != nil {
				t.Errorf("unmarshalYAML: %v", err)
				return
			}
			if diff := cmp.Diff(theirs, ours); diff != "" {
				t.Errorf("unmarshalYAML (-yaml.v2 +ours):\n%s", diff)
			}
		})
	}
}

// TestYAMLValues: what the oracle agreed on above is what a file means.
func TestYAMLValues(t *testing.T) {
	got := defaultConfig()
	err := unmarshalYAML([]byte("tls_server_config:\n  cert: |\n    a\n     b\n\n  key: >-\n    c\n    d\n\n    e\n"+
		"  client_ca: |+\n    f\n\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n"+
		"http_server_config:\n  http2: off\nrate_limit: {interval: 3, burst: 2.9}\n"), got)
	if err != nil {
		t.Fatal(err)
	}
	want := defaultConfig()
	want.TLS.Cert, want.TLS.Key, want.TLS.ClientCA = "a\n b\n", "c d\ne", "f\n\n"
	want.TLS.CipherSuites = []Cipher{Cipher(0x1301)}
	want.HTTP.HTTP2 = false
	want.RateLimit = RateLimitConfig{Interval: 3, Burst: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unmarshalYAML (-want +got):\n%s", diff)
	}
}

// yamlRejects are refused by yaml.v2 too; the error names the line.
var yamlRejects = []struct{ name, body, want string }{
	{"unknown key", "rate_limit:\n  burst: 1\nfrobnicate: 1\n", "line 3: field frobnicate not found"},
	{"unknown nested key", "tls_server_config:\n  cert_fil: x\n", "line 2: field cert_fil not found"},
	{"toolkit example's newer key", "basic_auth_users:\n  alice: " + hashAlice + "\n\nbasic_auth_excluded_paths:\n- /-/healthy\n", "line 4: field basic_auth_excluded_paths"},
	{"duplicate key", "rate_limit:\n  burst: 1\nrate_limit:\n  burst: 2\n", "line 3: field rate_limit already set"},
	{"duplicate nested key", "rate_limit:\n  burst: 1\n  burst: 2\n", "line 3: field burst already set"},
	{"duplicate quoted key", "tls_server_config:\n  cert_file: a\n  \"cert_file\": b\n", "line 3: field cert_file already set"},
	{"duplicate user", "basic_auth_users:\n  alice: a\n  bob: b\n  alice: c\n", `line 4: key "alice" already set`},
	{"duplicate user in flow", "basic_auth_users: {alice: a, 'alice': b}\n", `line 1: key "alice" already set`},
	{"not a bool", "http_server_config:\n  http2: maybe\n", `line 2: cannot unmarshal "maybe" into bool`},
	{"quoted bool", "http_server_config:\n  http2: \"true\"\n", "line 2: cannot unmarshal"},
	{"duration as int", "rate_limit:\n  burst: 1s\n", "line 2: cannot unmarshal"},
	{"quoted number as duration", "rate_limit:\n  interval: \"5\"\n", "line 2: cannot unmarshal"},
	{"bool as duration", "rate_limit:\n\n  interval: yes\n", "line 3: cannot unmarshal"},
	{"scalar for a list", "tls_server_config:\n  cipher_suites: TLS_AES_128_GCM_SHA256\n", "line 2: cannot unmarshal"},
	{"list for a section", "tls_server_config: [a]\n", "line 1: cannot unmarshal a sequence"},
	{"list for a string", "tls_server_config:\n  cert_file:\n    - a\n", "line 3: cannot unmarshal a sequence into string"},
	{"mapping for a list item", "tls_server_config:\n  client_allowed_sans:\n  - a: b\n", "line 3: cannot unmarshal a mapping"},
	{"scalar document", "tls_server_config\n", "line 1: cannot unmarshal"},
	{"unknown cipher", "tls_server_config:\n  cipher_suites:\n  - TLS_NOPE\n", "line 3: unknown cipher: TLS_NOPE"},
	{"Null version", "tls_server_config:\n  min_version: Null\n", "line 2: unknown TLS version"},
	{"bad indentation", "tls_server_config:\n    cert_file: a\n  key_file: b\n", "line 3:"},
	{"value and key on a line", "rate_limit: burst: 1\n", "line 1: mapping values are not allowed"},
	{"unclosed flow", "tls_server_config:\n  cipher_suites: [a, b\n", "line 3: did not find the end of a flow collection"},
	{"text after a quoted scalar", "tls_server_config:\n  cert_file: \"a\" b\n", "line 2:"},
	{"sequence after a value", "rate_limit:\n  burst: 1\n  - 2\n", "line 3:"},
	{"bad escape", "tls_server_config:\n  cert_file: \"\\q\"\n", "line 2: found unknown escape"},
	{"control character", "rate_limit:\n  burst: \x01\n", "line 2: control characters"},
	{"invalid UTF-8", "rate_limit:\n  burst: \xff\n", "line 2: invalid UTF-8"},
	{"indentation indicator 0", "tls_server_config:\n  cert: |0\n   x\n", "line 2:"},
	{"reserved character", "tls_server_config:\n  cert_file: @x\n", "line 2:"},
}

// yamlUnsupported are outside the subset: refused as such, by name.
var yamlUnsupported = []struct{ name, body, want string }{
	{"anchor and alias", "rate_limit: &r\n  burst: 1\nhttp_server_config: *r\n", "anchor"},
	{"tag", "rate_limit:\n  burst: !!int 1\n", "tag"},
	{"merge key", "rate_limit:\n  <<: {burst: 1}\n", "merge key"},
	{"plain scalar on two lines", "tls_server_config:\n  cert_file: a\n    b\n", "plain scalar over several lines"},
	{"quoted scalar on two lines", "tls_server_config:\n  cert_file: \"a\n    b\"\n", "quoted scalar over several lines"},
	{"directive", "%YAML 1.1\n---\nrate_limit: {}\n", "directive"},
	{"two documents", "rate_limit: {}\n---\nrate_limit: {}\n", "several documents"},
	{"document end", "rate_limit: {}\n...\n", "several documents"},
	{"explicit key", "? rate_limit\n: {}\n", "key or value indicator"},
	{"tab indentation", "rate_limit:\n\tburst: 1\n", "tab"},
	{"lone CR", "rate_limit:\r  burst: 1\r", "line break"},
}

func TestYAMLRejects(t *testing.T) {
	for _, tc := range yamlRejects {
		t.Run(tc.name, func(t *testing.T) {
			_, err, _, theirsErr := bothWays([]byte(tc.body))
			if theirsErr == nil {
				t.Errorf("yaml.v2 accepts the file")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("unmarshalYAML: %v, want one line with %q", err, tc.want)
			}
			if isUnsupported(err) {
				t.Errorf("unmarshalYAML: %v, want a plain error, not unsupported", err)
			}
		})
	}
	for _, tc := range yamlUnsupported {
		t.Run(tc.name, func(t *testing.T) {
			_, err, _, _ := bothWays([]byte(tc.body))
			if !isUnsupported(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not supported") {
				t.Errorf("unmarshalYAML: %v, want unsupported %q", err, tc.want)
			}
		})
	}
}

// edgeCases are corners of YAML where a parser of the subset may part
// from yaml.v2; they seed the fuzzer too.
var edgeCases = []string{
	"rate_limit:\n  burst: 1\n\t\n", "rate_limit:\n  burst: 1\n  \t  \n", "rate_limit:\n  burst: 1 \t# c\n",
	"rate_limit:\t{burst: 1}\n", "rate_limit: {burst:1}\n", "rate_limit: {\"burst\":1}\n", "rate_limit: {burst}\n",
	"rate_limit: {burst: }\n", "rate_limit: {burst: 1,}\n", "rate_limit: {, burst: 1}\n", "rate_limit: {burst\n: 1}\n",
	"tls_server_config: {client_allowed_sans: [a, b, ]}\n", "tls_server_config: {client_allowed_sans: [a,,b]}\n",
	"tls_server_config:\n  client_allowed_sans: [a#b, c #d\n  ]\n", "tls_server_config:\n  client_allowed_sans: [a\n  b]\n",
	"tls_server_config:\n  client_allowed_sans: [a\n, b]\n", "tls_server_config:\n  client_allowed_sans: [\nb]\n",
	"tls_server_config:\n  client_allowed_sans: [a: b]\n", "tls_server_config:\n  client_allowed_sans: [-a, -]\n",
	"tls_server_config:\n  client_allowed_sans: [a:, :b]\n", "tls_server_config:\n  client_allowed_sans: ['a'#c\n  ]\n",
	"tls_server_config:\n  client_allowed_sans:\n  - a\n  -b\n", "tls_server_config:\n  client_allowed_sans:\n  -\ta\n",
	"tls_server_config:\n  client_allowed_sans:\n  - - a\n", "tls_server_config:\n  client_allowed_sans:\n   - a\n  - b\n",
	"tls_server_config:\n  client_allowed_sans:\n    - a\n  key_file: x\n", "tls_server_config:\n  cert: |\n  key_file: x\n",
	"tls_server_config:\n  cert: |\n\n   \n    a\n  \n     b\n\n\n  key: x\n", "tls_server_config:\n  cert: |\n     \n    a\n",
	"tls_server_config:\n  cert: >\n    a\n    b\n\n     c\n    d\n\n\n    e\n", "tls_server_config:\n  cert: |-\n    a\n\n",
	"tls_server_config:\n  cert: |+\n    a\n\n", "tls_server_config:\n  cert: |+\n    a", "tls_server_config:\n  cert: |\n    a\n   \t\n",
	"tls_server_config:\n  cert: |1\n    a\n", "tls_server_config:\n  cert: |-1\n    a\n", "tls_server_config:\n  cert: |x\n",
	"tls_server_config:\n  cert: |#c\n    a\n", "tls_server_config:\n  cert: >\n\ta\n", "tls_server_config:\n  cert: |\n    a\n# c\n    b\n",
	"tls_server_config:\n  cert:\n    |\n     a\n", "tls_server_config:\n  cert:\n    \"a\"\n", "tls_server_config:\n  cert:\n    a\n",
	"tls_server_config:\n  cert: \"\\x4\"\n", "tls_server_config:\n  cert: \"\\uD800\"\n", "tls_server_config:\n  cert: \"\\U0001F600\\/\"\n",
	"tls_server_config:\n  cert: ''''\n", "tls_server_config:\n  cert: ' a '\n", "tls_server_config:\n  cert: ---\n",
	"tls_server_config:\n  cert: a: b\n", "tls_server_config:\n  cert: a:b\n", "tls_server_config:\n  cert: -a\n",
	"tls_server_config:\n  cert: ?a\n", "tls_server_config:\n  cert: :a\n", "tls_server_config:\n  cert: a #\n",
	"tls_server_config:\n  cert: [a]\n", "tls_server_config:\n  cert: {}\n", "tls_server_config:\n  cert: 1\n",
	"tls_server_config:\n  cert: 2001-01-01\n", "tls_server_config:\n  cert: ~\n", "tls_server_config:\n  cert: ''\n",
	"tls_server_config:\n  min_version: ~\n", "tls_server_config:\n  min_version: '~'\n", "tls_server_config:\n  min_version:\n",
	"tls_server_config:\n  min_version: NULL\n", "tls_server_config:\n  min_version: [TLS12]\n", "tls_server_config:\n  cipher_suites: [~]\n",
	"rate_limit:\n  interval: -1s\n", "rate_limit:\n  interval: .5s\n", "rate_limit:\n  interval: 1_000\n", "rate_limit:\n  interval: 1e3\n",
	"rate_limit:\n  burst: -.inf\n", "rate_limit:\n  burst: .nan\n", "rate_limit:\n  burst: 0b101\n", "rate_limit:\n  burst: -0b101\n",
	"rate_limit:\n  burst: 9223372036854775808\n", "rate_limit:\n  burst: 1e300\n", "rate_limit:\n  burst: -1e300\n", "rate_limit:\n  burst: 010\n",
	"rate_limit:\n  burst: +5\n", "rate_limit:\n  burst: 0o17\n", "rate_limit:\n  burst: 1.\n", "rate_limit:\n  burst: .5\n",
	"http_server_config:\n  http2: y\n", "http_server_config:\n  http2: On\n", "http_server_config:\n  http2: tRue\n",
	"basic_auth_users:\n  ~: a\n", "basic_auth_users:\n  null: a\n  ~: b\n", "basic_auth_users:\n  1: a\n  '1': b\n",
	"basic_auth_users:\n  a: \n", "basic_auth_users:\n  a: [b]\n", "basic_auth_users:\n  <<: {a: b}\n", "basic_auth_users:\n  '<<': b\n",
	"basic_auth_users: {<<: {a: b}}\n", "basic_auth_users:\n  a b: c d\n", "basic_auth_users:\n  a : b\n", "basic_auth_users:\n  \"a\" : b\n",
	"basic_auth_users:\n  \"a\":b\n", "basic_auth_users:\n  [a]: b\n", "basic_auth_users:\n  {a: b}: c\n", "basic_auth_users:\n  : b\n",
	"basic_auth_users:\n  a: b\n  b: c\n d: e\n", "---\n---\n", "--- \n", "--- {}\n", "---{}\n", "...\n", "\n\n", "#", " ", "\t",
	"{}\n", "[]\n", "{} # c\n", "{}\nrate_limit: {}\n", "  rate_limit: {}\nfoo\n", "\"\"\n", "''\n", "null\n", "Null\n", "|\n a\n",
	"rate_limit:\n  burst: 1\n---\n", "rate_limit:\n  burst: 1\n...\n", "- a\n", "%TAG ! x\n---\n", "rate_limit:\n%\n", "@\n", "`a\n",
	"rate_limit:\n  burst: 1\n  \n  interval: 2s\n", "rate_limit:\r\n  burst: 1\r\n", "rate_limit:\n  burst: 1\r", "\ufeff\ufeffrate_limit: {}\n",
}

// FuzzParseMatchesYAML: whatever the parser accepts, yaml.v2 accepts into
// the same Config; whatever yaml.v2 accepts, the parser accepts alike or
// refuses as unsupported; and it never panics.
func FuzzParseMatchesYAML(f *testing.F) {
	for _, body := range realFiles {
		f.Add([]byte(body))
	}
	for _, tc := range yamlRejects {
		f.Add([]byte(tc.body))
	}
	for _, tc := range yamlUnsupported {
		f.Add([]byte(tc.body))
	}
	for _, s := range edgeCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ours, err, theirs, theirsErr := bothWays(src)
		switch {
		case err == nil && theirsErr != nil:
			t.Errorf("accepted, but yaml.v2 refuses: %v", theirsErr)
		case err == nil:
			if diff := cmp.Diff(theirs, ours); diff != "" {
				t.Errorf("unmarshalYAML (-yaml.v2 +ours):\n%s", diff)
			}
		case theirsErr == nil && !isUnsupported(err):
			t.Errorf("refused (%v), but yaml.v2 accepts it as %+v", err, theirs)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "yaml: ") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("error %q, want one line starting with yaml:", err)
		}
	})
}
