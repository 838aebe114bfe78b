package containers

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// Bounds on what the node's files may make the resolver hold. A node runs
// at most a few hundred pods (the kubelet's default limit is 110); these
// leave room for that many times over and stop a hostile or broken node
// from growing the monitor without end. What is beyond them is not named:
// its rows show the IDs the cgroup path gives.
const (
	// MaxName is the longest name kept, in bytes: the longest a
	// Kubernetes object name may be (a DNS subdomain). A longer one is cut
	// at a character boundary.
	MaxName = 253
	// MaxPods and MaxContainers bound the entries read from
	// /var/log/pods and /var/log/containers; MaxCached the cgroups whose
	// resolution is kept.
	MaxPods       = 16384
	MaxContainers = 65536
	MaxCached     = 16384
	// maxMetadata bounds a runtime's metadata file read.
	maxMetadata = 16 << 20
	// rescanEvery is how often, at most, the node's files are looked at
	// again for a container or pod not yet named: containers come and go,
	// the kubelet makes a pod's log directory just after its cgroup.
	rescanEvery = time.Second
)

// The node's files, relative to the host root.
const (
	podLogs       = "var/log/pods"
	containerLogs = "var/log/containers"
	dockerStore   = "var/lib/docker/containers"
	podmanStore   = "var/lib/containers/storage/overlay-containers/containers.json"
)

// Resolver names what runs in cgroups, from the files of the node whose
// root it reads. It caches what it found and looks at the node's files
// again, at most every second, when a cgroup's container or pod is not
// named yet. It is not safe for concurrent use: each sampler has its own.
type Resolver struct {
	root string
	now  func() time.Time

	pods   map[string]podName // by UID
	ctrs   map[string]ctrName // by container ID
	podman map[string]string  // container ID → name
	docker map[string]ctrName // container ID → name and pod labels; "" when none

	stamps    [3]stamp // of podLogs, containerLogs, podmanStore
	lastCheck time.Time
	// gen counts changes of what the node's files say: a cached
	// resolution that named less than everything is redone when it moves.
	gen   uint64
	cache map[string]entry
}

type podName struct{ namespace, name string }

type ctrName struct{ namespace, pod, name string }

type entry struct {
	c   *model.Container
	gen uint64
}

// stamp is what says a directory or file changed: its modification time
// and size.
type stamp struct {
	mod  time.Time
	size int64
	ok   bool
}

// New returns a resolver reading the node's files under root ("/" for
// this host, the host's root mounted in a container otherwise).
func New(root string) *Resolver {
	if root == "" {
		root = "/"
	}
	return &Resolver{root: root, now: time.Now, cache: map[string]entry{}, docker: map[string]ctrName{}}
}

// Resolve says what runs in the cgroup at path (as /proc/PID/cgroup names
// it, made clean): nil for a cgroup that is no container's or pod's. The
// result is shared and never changed; ask again later for a fresher one.
func (r *Resolver) Resolve(path string) *model.Container {
	if e, ok := r.cache[path]; ok && (Complete(e.c) || e.gen == r.gen && !r.due()) {
		return e.c
	}
	pc, ok := Parse(path)
	if !ok {
		r.put(path, nil)
		return nil
	}
	r.refresh()
	c := r.name(pc)
	r.put(path, c)
	return c
}

// Complete says whether a resolution names everything it can: nothing
// would be learnt from the node's files again.
func Complete(c *model.Container) bool {
	return c == nil || c.Name != "" && (c.PodUID == "" || c.Pod != "") || c.ID == "" && c.Pod != ""
}

func (r *Resolver) put(path string, c *model.Container) {
	if len(r.cache) >= MaxCached {
		// Cgroups come and go; a full cache is mostly of gone ones.
		clear(r.cache)
	}
	r.cache[path] = entry{c, r.gen}
}

// due says whether the node's files may be looked at again.
func (r *Resolver) due() bool { return r.now().Sub(r.lastCheck) >= rescanEvery }

// refresh rereads whichever of the node's files changed, when due.
func (r *Resolver) refresh() {
	if !r.due() && r.pods != nil {
		return
	}
	r.lastCheck = r.now()
	changed := false
	if s := r.stat(podLogs); s != r.stamps[0] || r.pods == nil {
		r.stamps[0], r.pods, changed = s, r.readPods(), true
	}
	if s := r.stat(containerLogs); s != r.stamps[1] || r.ctrs == nil {
		r.stamps[1], r.ctrs, changed = s, r.readContainerLogs(), true
	}
	if s := r.stat(podmanStore); s != r.stamps[2] || r.podman == nil {
		r.stamps[2], r.podman, changed = s, r.readPodman(), true
	}
	if changed {
		r.gen++
		// Docker's files are read per container: forget the ones that
		// had no name, they may have one now.
		for id, n := range r.docker {
			if n.name == "" {
				delete(r.docker, id)
			}
		}
	}
}

func (r *Resolver) stat(rel string) stamp {
	fi, err := os.Stat(filepath.Join(r.root, rel))
	if err != nil {
		return stamp{}
	}
	return stamp{fi.ModTime(), fi.Size(), true}
}

// name fills in the names the node holds for a parsed cgroup.
func (r *Resolver) name(pc model.Container) *model.Container {
	c := pc
	if c.PodUID != "" {
		if p, ok := r.pods[c.PodUID]; ok {
			c.Namespace, c.Pod = p.namespace, p.name
		}
	}
	if c.ID != "" {
		// A pod's container by the kubelet's links first; a runtime's own
		// container by the runtime's name for it.
		var n ctrName
		found := false
		if c.PodUID != "" {
			n, found = r.ctrs[c.ID]
		}
		if !found && (c.Runtime == "docker" || c.Runtime == "") {
			if d := r.dockerName(c.ID); d.name != "" {
				n, found = d, true
				c.Runtime = "docker"
			}
		}
		if !found && (c.Runtime == "podman" || c.Runtime == "") {
			if name := r.podman[c.ID]; name != "" {
				n, found = ctrName{name: name}, true
				c.Runtime = "podman"
			}
		}
		if !found {
			// The kubelet's container seen without its pod's cgroup (from
			// a cgroup namespace whose root was not found).
			n, found = r.ctrs[c.ID]
		}
		if found {
			c.Name = n.name
			if c.Pod == "" && n.pod != "" {
				c.Namespace, c.Pod = n.namespace, n.pod
			}
		}
	}
	return model.Seal(c)
}

// readPods lists /var/log/pods: one directory per pod,
// "<namespace>_<pod>_<uid>". Neither a namespace nor a pod name may hold
// '_', so a name with any other number of them is not the kubelet's.
func (r *Resolver) readPods() map[string]podName {
	m := map[string]podName{}
	for _, name := range r.list(podLogs, MaxPods) {
		ns, rest, ok1 := strings.Cut(name, "_")
		pod, uid, ok2 := strings.Cut(rest, "_")
		if !ok1 || !ok2 || strings.Contains(uid, "_") || !isUID(uid) || ns == "" || pod == "" {
			continue
		}
		m[uid] = podName{clean(ns), clean(pod)}
	}
	return m
}

// readContainerLogs lists /var/log/containers: one link per container,
// "<pod>_<namespace>_<container>-<id>.log".
func (r *Resolver) readContainerLogs() map[string]ctrName {
	m := map[string]ctrName{}
	for _, name := range r.list(containerLogs, MaxContainers) {
		base, ok := strings.CutSuffix(name, ".log")
		dash := strings.LastIndexByte(base, '-')
		if !ok || dash < 0 || !isHexID(base[dash+1:]) {
			continue
		}
		id := base[dash+1:]
		pod, rest, ok1 := strings.Cut(base[:dash], "_")
		ns, ctr, ok2 := strings.Cut(rest, "_")
		if !ok1 || !ok2 || strings.Contains(ctr, "_") || pod == "" || ns == "" || ctr == "" {
			continue
		}
		m[id] = ctrName{clean(ns), clean(pod), clean(ctr)}
	}
	return m
}

// list returns up to max names of the directory rel; none when it cannot
// be read (no such runtime on this node, or not mounted in here).
func (r *Resolver) list(rel string, max int) []string {
	f, err := os.Open(filepath.Join(r.root, rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	names, err := f.Readdirnames(max)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return names
}

// readPodman reads the container store's list, the one file in which
// Podman (and every tool on containers/storage) names its containers.
func (r *Resolver) readPodman() map[string]string {
	b, err := r.readBounded(podmanStore)
	if err != nil {
		return map[string]string{}
	}
	var list []struct {
		ID    string   `json:"id"`
		Names []string `json:"names"`
	}
	if json.Unmarshal(b, &list) != nil {
		return map[string]string{}
	}
	m := make(map[string]string, min(len(list), MaxContainers))
	for _, c := range list {
		if len(m) == MaxContainers {
			break
		}
		if isHexID(c.ID) && len(c.Names) > 0 && c.Names[0] != "" {
			m[c.ID] = clean(c.Names[0])
		}
	}
	return m
}

// dockerName reads one container's config.v2.json: its name, and the
// pod it belongs to when the kubelet made it (cri-dockerd's labels). The
// answer is kept, none included, until the node's files change.
func (r *Resolver) dockerName(id string) ctrName {
	if n, ok := r.docker[id]; ok {
		return n
	}
	var n ctrName
	if b, err := r.readBounded(filepath.Join(dockerStore, id, "config.v2.json")); err == nil {
		var cfg struct {
			Name   string
			Config struct{ Labels map[string]string }
		}
		if json.Unmarshal(b, &cfg) == nil {
			n.name = clean(strings.TrimPrefix(cfg.Name, "/"))
			l := cfg.Config.Labels
			if k := l["io.kubernetes.container.name"]; k != "" {
				n = ctrName{clean(l["io.kubernetes.pod.namespace"]), clean(l["io.kubernetes.pod.name"]), clean(k)}
			}
		}
	}
	if len(r.docker) >= MaxContainers {
		clear(r.docker)
	}
	r.docker[id] = n
	return n
}

func (r *Resolver) readBounded(rel string) ([]byte, error) {
	f, err := os.Open(filepath.Join(r.root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetadata+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxMetadata {
		return nil, errors.New("too large")
	}
	return b, nil
}

// clean makes an untrusted name safe to print and bounded: cut to MaxName
// bytes at a character boundary, then sanitized.
func clean(s string) string {
	if len(s) > MaxName {
		// Cut before the character that straddles the bound, if any.
		i := MaxName
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	return sanitize.Name(s)
}

// Clean is clean for names that enter elsewhere (a recording's reader).
func Clean(s string) string { return clean(s) }
