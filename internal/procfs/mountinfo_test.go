package procfs

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcMount(t *testing.T) {
	const mounts = `22 27 0:21 / /proc rw,relatime - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
42 27 0:39 / /tmp/p rw,relatime - proc proc rw,hidepid=invisible
43 27 0:40 / /tmp/old rw,relatime - proc proc rw,gid=27,hidepid=2
44 27 0:41 / /tmp/with\040blank rw - proc proc rw,hidepid=noaccess
45 27 0:42 / /tmp/p rw - proc proc rw,hidepid=ptraceable,subset=pid
46 27 0:43 / /tmp/off rw - proc proc rw,hidepid=off
`
	type result struct {
		M     ProcMount
		Found bool
	}
	for _, c := range []struct {
		at   string
		want result
	}{
		{"/proc", result{ProcMount{GID: -1}, true}},
		{"/tmp/old", result{ProcMount{HidePID: "invisible", GID: 27}, true}},
		{"/tmp/with blank", result{ProcMount{HidePID: "noaccess", GID: -1}, true}},
		{"/tmp/p", result{ProcMount{HidePID: "ptraceable", GID: -1}, true}}, // the mount on top
		{"/tmp/off", result{ProcMount{GID: -1}, true}},
		{"/sys/fs/cgroup", result{ProcMount{GID: -1}, false}}, // not a procfs
		{"/elsewhere", result{ProcMount{GID: -1}, false}},
	} {
		m, found, err := ParseProcMount([]byte(mounts), "mountinfo", c.at)
		if err != nil {
			t.Errorf("%s: %v", c.at, err)
			continue
		}
		if diff := cmp.Diff(c.want, result{m, found}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.at, diff)
		}
	}
	for _, bad := range []string{
		"42 27 0:39 / /tmp/p rw - proc proc rw,hidepid=3\n",
		"42 27 0:39 / /tmp/p rw - proc proc rw,gid=x\n",
		"42 27 0:39 / /tmp/p rw - proc proc rw,gid=99999999999\n",
		"42 27 0:39 - proc proc rw\n",
	} {
		if _, _, err := ParseProcMount([]byte(bad), "mountinfo", "/tmp/p"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestHidesFrom(t *testing.T) {
	for _, c := range []struct {
		m      ProcMount
		euid   int
		groups []int
		want   bool
	}{
		{ProcMount{GID: -1}, 65534, nil, false},
		{ProcMount{HidePID: "invisible", GID: -1}, 65534, []int{65534}, true},
		{ProcMount{HidePID: "noaccess", GID: -1}, 1000, nil, true},
		{ProcMount{HidePID: "invisible", GID: -1}, 0, nil, false},
		{ProcMount{HidePID: "invisible", GID: 27}, 1000, []int{1000, 27}, false},
		{ProcMount{HidePID: "invisible", GID: 27}, 1000, []int{1000}, true},
	} {
		if got := c.m.HidesFrom(c.euid, c.groups); got != c.want {
			t.Errorf("%+v.HidesFrom(%d, %v) = %v, want %v", c.m, c.euid, c.groups, got, c.want)
		}
	}
}

func FuzzParseProcMount(f *testing.F) {
	f.Add([]byte("42 27 0:39 / /tmp/p rw,relatime - proc proc rw,gid=27,hidepid=invisible\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, found, err := ParseProcMount(b, "mountinfo", "/tmp/p")
		if err != nil && found {
			t.Errorf("found with an error: %+v %v", m, err)
		}
	})
}

// TestProcMountOfARealHidepidMount mounts a procfs with hidepid=2 (root)
// and reads its options back through the FS rooted there.
func TestProcMountOfARealHidepidMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a procfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "proc", "-o", "hidepid=2", "proc", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a procfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	fs, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, found, err := fs.ProcMount()
	if err != nil || !found || m.HidePID != "invisible" {
		t.Errorf("ProcMount at %s: %+v found %v err %v; want hidepid invisible", dir, m, found, err)
	}
	if !m.HidesFrom(65534, []int{65534}) {
		t.Errorf("%+v does not hide from nobody", m)
	}
}
