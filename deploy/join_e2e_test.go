package deploy_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v2"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A real Prometheus scrapes ctxtop serve on a node (real cgroups named as
// the kubelet names them, the node's files naming the pods) the way
// prometheus-operator does through the shipped ServiceMonitor: the target
// labelled with ctxtop's own namespace, pod and container, then the
// ServiceMonitor's relabelings. Beside it, cAdvisor's series for the same
// containers. Each named container's ctxtop_container_* series must join
// cAdvisor's on (namespace, pod, container).
func TestContainerSeriesJoinCadvisor(t *testing.T) {
	bin := needTool(t, "prometheus")
	cg := nodetest.NewCgroups(t)
	node := nodetest.NewNode(t, cg, nodetest.HostRoot(t))
	pids := make([]string, len(node.PIDs))
	for i, p := range node.PIDs {
		pids[i] = strconv.Itoa(p)
	}
	addr := testutil.StartServe(t, "--web.listen-address=127.0.0.1:0", "--host-root", node.Root, "-p", strings.Join(pids, ","))

	// cAdvisor's series as the kubelet serves them: one per container,
	// and the pod's own cgroup with container="".
	var cadvisor bytes.Buffer
	var want []string
	cadvisor.WriteString("# TYPE container_cpu_usage_seconds_total counter\n")
	for _, title := range node.Titles {
		parts := strings.Split(title, "/")
		if len(parts) != 3 {
			continue // a container outside any pod: cAdvisor has no pod labels for it
		}
		want = append(want, title)
		fmt.Fprintf(&cadvisor, "container_cpu_usage_seconds_total{container=%q,cpu=\"total\",image=\"registry.example/%s:1\",namespace=%q,pod=%q} 12.5\n",
			parts[2], parts[2], parts[0], parts[1])
		fmt.Fprintf(&cadvisor, "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",image=\"\",namespace=%q,pod=%q} 25\n", parts[0], parts[1])
	}
	sort.Strings(want)
	if len(want) != 6 {
		t.Fatalf("the node has %d pod containers, want 6", len(want))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(cadvisor.Bytes())
	}))
	defer srv.Close()

	type relabel struct {
		SourceLabels []string `yaml:"source_labels,omitempty"`
		TargetLabel  string   `yaml:"target_label,omitempty"`
		Action       string   `yaml:"action,omitempty"`
		Regex        string   `yaml:"regex,omitempty"`
	}
	var relabels []relabel
	for _, r := range shippedServiceMonitor(t).Spec.Endpoints[0].Relabelings {
		relabels = append(relabels, relabel(r))
	}
	type static struct {
		Targets []string          `yaml:"targets"`
		Labels  map[string]string `yaml:"labels,omitempty"`
	}
	type job struct {
		Name          string    `yaml:"job_name"`
		Timeout       string    `yaml:"scrape_timeout"`
		HonorLabels   bool      `yaml:"honor_labels,omitempty"`
		Static        []static  `yaml:"static_configs"`
		RelabelConfig []relabel `yaml:"relabel_configs,omitempty"`
	}
	cfg := struct {
		Global map[string]string `yaml:"global"`
		Jobs   []job             `yaml:"scrape_configs"`
	}{
		Global: map[string]string{"scrape_interval": "1s"},
		Jobs: []job{
			// The target labels prometheus-operator gives every
			// ServiceMonitor target, before the ServiceMonitor's own.
			{Name: "ctxtop", Timeout: "1s", RelabelConfig: relabels, Static: []static{{Targets: []string{addr},
				Labels: map[string]string{"namespace": "monitoring", "pod": "ctxtop-x7k2p", "container": "ctxtop"}}}},
			// kube-prometheus scrapes the kubelet's cAdvisor with honorLabels.
			{Name: "kubelet", Timeout: "1s", HonorLabels: true, Static: []static{{Targets: []string{strings.TrimPrefix(srv.URL, "http://")}}}},
		},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := runPrometheus(t, bin, string(b))
	p.waitFor(`ctxtop_container_threads`, 20*time.Second)
	p.waitFor(`container_cpu_usage_seconds_total`, 20*time.Second)

	join := `ctxtop_container_threads * on (namespace, pod, container) group_left (image) container_cpu_usage_seconds_total{container!=""}`
	var got []string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(500 * time.Millisecond) {
		got = got[:0]
		for _, s := range p.query(join, time.Time{}) {
			m := s.Metric
			if m["image"] != "registry.example/"+m["container"]+":1" {
				t.Errorf("joined %v with another container's image", m)
			}
			got = append(got, m["namespace"]+"/"+m["pod"]+"/"+m["container"])
		}
		sort.Strings(got)
		if len(got) == len(want) {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s\nctxtop's series: %v", join, diff, p.query(`ctxtop_container_threads`, time.Time{}))
	}
	// Which ctxtop a series came from is still known.
	for _, s := range p.query(`ctxtop_container_threads`, time.Time{}) {
		if s.Metric["instance"] != addr || s.Metric["exported_namespace"] != "" {
			t.Errorf("series %v: want instance %s and no exported_ labels", s.Metric, addr)
		}
	}
}

// shippedServiceMonitor is deploy/kubernetes/ctxtop.yaml's ServiceMonitor,
// strictly decoded.
func shippedServiceMonitor(t *testing.T) serviceMonitor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), "kubernetes", "ctxtop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	var sm serviceMonitor
	strict(t, docs[len(docs)-1], &sm)
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("%d endpoints in the ServiceMonitor, want 1", len(sm.Spec.Endpoints))
	}
	return sm
}
