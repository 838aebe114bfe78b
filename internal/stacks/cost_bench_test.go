package stacks_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// manyLibsMain dlopens the libraries named on its command line, each
// with one function that sleeps briefly, and calls them in turn from
// four threads: every blocking stack goes through one of them, so ctxtop
// reads the unwind tables and symbols of all.
const manyLibsMain = `
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void (*fns[256])(void);
static int n;

static void *loop(void *arg) {
	for (unsigned i = (unsigned long)arg;; i++)
		fns[i % n]();
	return NULL;
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc && n < 256; i++) {
		char sym[32];
		void *h = dlopen(argv[i], RTLD_NOW);
		if (!h)
			return 1;
		snprintf(sym, sizeof sym, "lib%d_wait", i - 1);
		if (!(fns[n++] = (void (*)(void))dlsym(h, sym)))
			return 1;
	}
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, loop, (void *)(i * 25));
	puts("ready");
	fflush(stdout);
	char b;
	return read(0, &b, 1) < 0;
}
`

// runCtxtop runs the ctxtop binary with args to its end and returns its
// CPU time and peak RSS (KiB).
func runCtxtop(b *testing.B, bin string, args ...string) (cpu time.Duration, rssKiB int64) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("ctxtop %v: %v\n%s", args, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Maxrss
}

// BenchmarkCtxtopManyBinaries is the whole ctxtop process's peak RSS and
// CPU time for 20 one-second reports of --stacks -p on a process whose
// threads block inside 100 distinct shared libraries (built here, -O2,
// no frame pointers), with captures (the default) and with frame-pointer
// stacks only.
func BenchmarkCtxtopManyBinaries(b *testing.B) {
	if err := stacks.Check(); err != nil {
		b.Skip(err)
	}
	bin := testutil.Binary(b)
	dir := b.TempDir()
	libs := []string{}
	for i := range 100 {
		src := filepath.Join(dir, fmt.Sprintf("lib%d.c", i))
		so := filepath.Join(dir, fmt.Sprintf("lib%d.so", i))
		code := fmt.Sprintf("#include <unistd.h>\nvoid lib%d_wait(void) { usleep(%d); }\n", i, 200+i)
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("cc", "-O2", "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
			b.Fatalf("cc: %v\n%s", err, out)
		}
		libs = append(libs, so)
	}
	main := filepath.Join(dir, "many.c")
	if err := os.WriteFile(main, []byte(manyLibsMain), 0o644); err != nil {
		b.Fatal(err)
	}
	prog := filepath.Join(dir, "many")
	if out, err := exec.Command("cc", "-O2", "-pthread", "-o", prog, main, "-ldl").CombinedOutput(); err != nil {
		b.Fatalf("cc: %v\n%s", err, out)
	}
	cmd := exec.Command(prog, libs...)
	_, out := testutil.StartWorkload(b, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("program said %q, %v", line, err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	maps, _ := os.ReadFile(filepath.Join("/proc", pid, "maps"))
	b.Logf("the program maps %d of the libraries", strings.Count(string(maps), "r-xp")-strings.Count(string(maps), "r-xp 00000000 00:00"))
	for range b.N {
		for _, c := range []struct{ name, bytes string }{{"capture", "4096"}, {"fp", "0"}} {
			cpu, rss := runCtxtop(b, bin, "-b", "-o", "json", "--stacks", "--stack-bytes", c.bytes, "-p", pid, "-d", "1", "-n", "20")
			b.ReportMetric(float64(rss)/1024, "MiB-rss-"+c.name)
			b.ReportMetric(cpu.Seconds()*1000/20, "ms-cpu/report-"+c.name)
			b.Logf("%s: peak RSS %.1f MiB, CPU %v for 20 reports", c.name, float64(rss)/1024, cpu)
		}
		cpu, rss := runCtxtop(b, bin, "-b", "-o", "json", "-p", pid, "-d", "1", "-n", "20")
		b.Logf("without --stacks: peak RSS %.1f MiB, CPU %v for 20 reports", float64(rss)/1024, cpu)
	}
}

// BenchmarkCtxtopPingPongCPU is the whole ctxtop process's CPU time and
// peak RSS for 20 one-second reports of --stacks -p on a futex ping-pong
// pinned to the last CPU (both its threads targets, each switching some
// 200,000 to 600,000 times a second), with captures and without; ctxtop
// itself runs wherever the scheduler puts it.
func BenchmarkCtxtopPingPongCPU(b *testing.B) {
	if err := stacks.Check(); err != nil {
		b.Skip(err)
	}
	bin := testutil.Binary(b)
	run, err := load.Start(load.Config{Mode: load.ModeFutex, CPUs: []int{runtime.NumCPU() - 1}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	time.Sleep(300 * time.Millisecond)
	threads := run.Progress().Threads
	if len(threads) != 2 {
		b.Fatalf("ping-pong threads: %+v", threads)
	}
	pid := strconv.Itoa(threads[0].PID)
	for range b.N {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"capture", []string{"--stacks"}}, {"fp", []string{"--stacks", "--stack-bytes", "0"}}, {"none", nil},
		} {
			p0 := run.Progress()
			args := append(append([]string{"-b", "-o", "json"}, c.args...), "-p", pid, "-d", "1", "-n", "20")
			cpu, rss := runCtxtop(b, bin, args...)
			p1 := run.Progress()
			perSec := float64(p1.RoundTrips-p0.RoundTrips) / (p1.Elapsed - p0.Elapsed).Seconds()
			b.ReportMetric(cpu.Seconds()*1000/20, "ms-cpu/report-"+c.name)
			b.ReportMetric(float64(rss)/1024, "MiB-rss-"+c.name)
			b.Logf("%s: CPU %v for 20 reports, peak RSS %.1f MiB; the ping-pong %.0f round trips a second", c.name, cpu, float64(rss)/1024, perSec)
		}
	}
}
