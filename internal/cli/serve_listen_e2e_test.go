package cli_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestServeRefusesAnAddressWithoutHost: an empty --web.listen-address, or
// one without a host, would listen on every interface (the empty one on
// a random port); each is one line, and every interface is taken only
// written out.
func TestServeRefusesAnAddressWithoutHost(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ addr, want string }{
		{"", "--web.listen-address is empty, which would listen on every interface"},
		{":10230", `--web.listen-address ":10230" names no host, which would listen on every interface: give 127.0.0.1:10230, or 0.0.0.0:10230`},
		{"127.0.0.1:", `"127.0.0.1:" names no port`},
	} {
		_, stderr, err := runFor(t, 10*time.Second, dir, "serve", "--web.listen-address="+tc.addr)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !oneLine(stderr, tc.want) {
			t.Errorf("--web.listen-address=%q: %v, want exit 1 and one line saying %q:\n%s", tc.addr, err, tc.want, stderr)
		}
	}
	// Go listens on 0.0.0.0 dual-stack, and says [::].
	if addr := testutil.StartServe(t, "--web.listen-address=0.0.0.0:0"); !strings.HasPrefix(addr, "0.0.0.0:") && !strings.HasPrefix(addr, "[::]:") {
		t.Errorf("0.0.0.0:0 listens on %s", addr)
	}
}
