package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// TestGoneProcess: a PID with no directory (the process exited) gives the
// addresses back unnamed and no error.
func TestGoneProcess(t *testing.T) {
	s := newSymbolizer(t, Options{Proc: t.TempDir()})
	frames, err := s.User(4242, []uint64{0x401000, 0x401100}, StackAddresses)
	if err != nil {
		t.Errorf("User on a gone process: %v, want no error", err)
	}
	for i, f := range frames {
		if f.Function != "" || f.Object != "" || f.String() != fmt.Sprintf("%#x", f.Addr) {
			t.Errorf("frame %d = %#v, want the bare address", i, f)
		}
	}
	if st := s.Stats(); st.Processes != 0 {
		t.Errorf("%d processes kept for a gone one", st.Processes)
	}
}

// TestOpenInRoot: a container's absolute symlink resolves inside the
// container's root, never to the host's file; a FIFO where a library should
// be is refused without blocking.
func TestOpenInRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/lib", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "hostname"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(root, "usr/lib/abs.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../../../etc/hostname", filepath.Join(root, "usr/lib/rel.so")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "usr/lib/fifo.so"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/lib/abs.so", "/usr/lib/rel.so", "/etc/hostname"} {
		f, err := openInRoot(root, p)
		if err != nil {
			t.Errorf("openInRoot(%s): %v", p, err)
			continue
		}
		b := make([]byte, 64)
		n, _ := f.Read(b)
		f.Close()
		if !bytes.Equal(b[:n], []byte("inside\n")) {
			t.Errorf("openInRoot(%s) read %q, not the root's own /etc/hostname", p, b[:n])
		}
	}
	if f, err := openInRoot(root, "/usr/lib/fifo.so"); !errors.Is(err, procfs.ErrNotRegular) {
		t.Errorf("openInRoot(fifo) = %v, %v; want ErrNotRegular", f, err)
	}
}

// TestMappedFileReplaced: when the path in maps now holds another file
// (another inode) and map_files cannot be used, the frame keeps its
// object name and file offset and gets no name from the wrong file.
func TestMappedFileReplaced(t *testing.T) {
	root := t.TempDir()
	pidDir := filepath.Join(root, "4242")
	if err := os.MkdirAll(filepath.Join(pidDir, "root", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pidDir, "root", "bin", "app"), self, 0o755); err != nil {
		t.Fatal(err)
	}
	maps := "400000-500000 r-xp 00001000 fd:01 1 /bin/app\n" // inode 1: not the file there
	if err := os.WriteFile(filepath.Join(pidDir, "maps"), []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSymbolizer(t, Options{Proc: root})
	frames, err := s.User(4242, []uint64{0x400010}, ExactAddresses)
	if err != nil {
		t.Fatal(err)
	}
	want := Frame{Addr: 0x400010, Object: "app", ObjectAddr: 0x1010}
	if frames[0] != want {
		t.Errorf("frame = %#v, want %#v", frames[0], want)
	}
}

// FuzzLoadObject: any bytes where an ELF file should be give an object or
// an error, never a panic, and a table whose lookups stay in bounds.
func FuzzLoadObject(f *testing.F) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(self[:1024])
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := loadObject(bytes.NewReader(b), objectLimits{symtabBytes: 1 << 20, pclntabBytes: 1 << 20})
		if err != nil {
			return
		}
		for _, s := range obj.syms.syms {
			if i := obj.syms.lookup(s.start); i >= 0 {
				_ = obj.syms.name(i)
			}
		}
	})
}
