package testutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// JavaClasses compiles the Java programs of internal/testutil/java with
// javac into a directory every user can read, and returns it. It fails
// the test when no JDK is installed (CI installs Debian's).
func JavaClasses(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		tb.Fatalf("javac (a JDK, Debian's default-jdk-headless) is not installed: %v", err)
	}
	dir := tb.TempDir()
	srcs, err := filepath.Glob(filepath.Join(repoRoot(), "internal/testutil/java/*.java"))
	if err != nil || len(srcs) == 0 {
		tb.Fatalf("no Java sources: %v", err)
	}
	cmd := exec.Command("javac", append([]string{"-d", dir}, srcs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("javac: %v\n%s", err, b)
	}
	// TempDir and its parent are private to their user; a JVM run as
	// nobody must read them.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// Java is a JVM a test started.
type Java struct {
	Cmd *exec.Cmd
	Out *bufio.Reader
}

// StartJava runs class from classes (JavaClasses) for the rest of the
// test, as the user cred (nil: the test's own), with jvmArgs before the
// class, wrapped in wrap (a command and its arguments, the java command
// line appended; nil for none), in the directory classes (its class path
// is ".", so that a wrapper may mount over /tmp), and waits for
// the line "ready" the programs print once they run. The process is
// ended when stdin closes or at the end of the test.
func StartJava(tb testing.TB, classes string, cred *syscall.Credential, wrap []string, class string, jvmArgs ...string) *Java {
	tb.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		tb.Fatalf("java is not installed: %v", err)
	}
	args := append(append(append(append([]string(nil), wrap...), java, "-Xmx64m", "-XX:+UseSerialGC", "-cp", "."), jvmArgs...), class)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = classes
	cmd.Stderr = os.Stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if wrap == nil {
		// Registered before StartWorkload's, so run after it has ended and
		// reaped the JVM. SIGKILL leaves the JVM's attach socket in /tmp, and
		// the next process given its PID (they wrap at 32768) could not
		// listen there if it runs as another user. A wrapped JVM's /tmp
		// is its own.
		tb.Cleanup(func() {
			if cmd.Process == nil {
				return // never started
			}
			sock := fmt.Sprintf("/tmp/.java_pid%d", cmd.Process.Pid)
			if st, err := os.Lstat(sock); err == nil && st.Mode().Type() == os.ModeSocket {
				os.Remove(sock)
			}
		})
	}
	_, out := StartWorkload(tb, cmd)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		tb.Fatalf("%s did not start: %q %v", class, line, err)
	}
	return &Java{Cmd: cmd, Out: out}
}
