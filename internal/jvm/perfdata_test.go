package jvm

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestOptionsFromPerfData: a real JVM given -XX:+PreserveFramePointer in
// an @argfile, beside options in JDK_JAVA_OPTIONS and JAVA_TOOL_OPTIONS
// (which its /proc command line does not show), says which options it
// took, in order, and gets no note that its frame pointers are off; one
// started with -XX:-UsePerfData keeps no such file, and its note comes
// from its command line as before.
func TestOptionsFromPerfData(t *testing.T) {
	classes := testutil.JavaClasses(t)
	argfile := filepath.Join(t.TempDir(), "jvm.args")
	if err := os.WriteFile(argfile, []byte("-Xss2m\n-XX:+PreserveFramePointer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"env", "JAVA_TOOL_OPTIONS=-XX:-UseCompressedOops", "JDK_JAVA_OPTIONS=-XX:+UseCompressedClassPointers"}
	j := testutil.StartJava(t, classes, nil, env, "Spin", "@"+argfile)
	pid := j.Cmd.Process.Pid
	p, err := Inspect("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := p.Options()
	if err != nil {
		t.Fatalf("Options: %v", err)
	}
	// JAVA_TOOL_OPTIONS first; JDK_JAVA_OPTIONS, which the launcher puts
	// before its arguments; then the command line with the argfile's.
	want := []string{"-XX:-UseCompressedOops", "-XX:+UseCompressedClassPointers", "-Xmx64m", "-XX:+UseSerialGC", "-Xss2m", "-XX:+PreserveFramePointer"}
	if got := slices.DeleteFunc(slices.Clone(opts), func(o string) bool { return !slices.Contains(want, o) }); !cmp.Equal(want, got) {
		t.Errorf("Options = %q; want these in this order: %q", opts, want)
	}
	if fp, err := PreserveFramePointerFromCmdline("/proc", pid); err != nil || fp {
		t.Fatalf("the command line shows %v, %v: the argfile's flag is not hidden from it, the test proves nothing", fp, err)
	}
	notes, _ := Notes("/proc", pid)
	want = []string{fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed", pid)}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("Notes of a JVM that keeps frame pointers (-want +got):\n%s", diff)
	}

	j = testutil.StartJava(t, classes, nil, nil, "Spin", "-XX:-UsePerfData", "-XX:+PreserveFramePointer")
	pid = j.Cmd.Process.Pid
	if p, err = Inspect("/proc", pid); err != nil {
		t.Fatal(err)
	}
	if opts, err := p.Options(); err == nil {
		t.Errorf("Options of a JVM without performance data = %q, want an error", opts)
	}
	notes, _ = Notes("/proc", pid)
	want = []string{fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed", pid)}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("Notes of a JVM without performance data, frame pointers on its command line (-want +got):\n%s", diff)
	}
}

// perfDataFile lays out a performance data file with string entries, as
// HotSpot does, for the parser's edge cases.
func perfDataFile(order binary.ByteOrder, entries ...[2]string) []byte {
	b := make([]byte, perfDataPrologue)
	copy(b, []byte{0xca, 0xfe, 0xc0, 0xc0})
	if order == binary.LittleEndian {
		b[4] = 1
	}
	order.PutUint32(b[24:], perfDataPrologue)
	order.PutUint32(b[28:], uint32(len(entries)))
	for _, e := range entries {
		name := append([]byte(e[0]), 0)
		data := append([]byte(e[1]), 0, 0, 0) // a vector longer than the string, as HotSpot sizes them
		ent := make([]byte, perfDataEntry)
		length := perfDataEntry + len(name) + len(data)
		order.PutUint32(ent, uint32(length))
		order.PutUint32(ent[4:], perfDataEntry)
		order.PutUint32(ent[8:], uint32(len(data)))
		ent[12] = 'B'
		order.PutUint32(ent[16:], uint32(perfDataEntry+len(name)))
		b = append(append(append(b, ent...), name...), data...)
	}
	return b
}

func TestPerfDataStrings(t *testing.T) {
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		b := perfDataFile(order, [2]string{"sun.rt.javaCommand", "Main"}, [2]string{"java.rt.vmArgs", "-Xmx1g -XX:+PreserveFramePointer"}, [2]string{"java.rt.vmFlags", ""})
		got, err := perfDataStrings(b, "java.rt.vmArgs", "java.rt.vmFlags")
		want := map[string]string{"java.rt.vmArgs": "-Xmx1g -XX:+PreserveFramePointer", "java.rt.vmFlags": ""}
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("%v: err %v (-want +got):\n%s", order, err, diff)
		}
		// Cut anywhere: what was whole is returned, the rest is an error,
		// never a panic or a read past the end.
		for n := range len(b) {
			if _, err := perfDataStrings(b[:n], "java.rt.vmArgs", "java.rt.vmFlags"); err == nil {
				t.Errorf("%v: cut at %d of %d: no error", order, n, len(b))
			}
		}
	}
	if _, err := perfDataStrings([]byte("#!/bin/sh\necho this is not a JVM's file\n"), "java.rt.vmArgs"); err == nil {
		t.Error("a file that is not performance data: no error")
	}
}

func FuzzPerfDataStrings(f *testing.F) {
	f.Add(perfDataFile(binary.LittleEndian, [2]string{"java.rt.vmArgs", "-Xmx1g"}))
	f.Add(perfDataFile(binary.BigEndian, [2]string{"java.rt.vmFlags", "-XX:+PreserveFramePointer"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = perfDataStrings(b, "java.rt.vmArgs", "java.rt.vmFlags")
	})
}
