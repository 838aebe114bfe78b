package deploy_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// serviceMonitor is prometheus-operator's ServiceMonitor (monitoring.coreos.com/v1),
// the fields the manifest may use: a CRD, so not in k8s.io/api, and its
// module would bring the operator's dependencies for four structs.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port        string       `json:"port"`
			Interval    string       `json:"interval"`
			Relabelings []relabeling `json:"relabelings"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// relabeling is a ServiceMonitor's RelabelConfig, the fields the manifest
// uses.
type relabeling struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Action       string   `json:"action,omitempty"`
	Regex        string   `json:"regex,omitempty"`
}

// strict decodes one YAML document into v as the API server's strict
// field validation does (sigs.k8s.io/json: field names case-sensitive,
// unknown fields refused): a misspelt key would otherwise be
// dropped, silently. encoding/json would take "hostPid" for hostPID.
func strict(t *testing.T, doc []byte, v any) {
	t.Helper()
	if err := strictErr(doc, v); err != nil {
		t.Fatalf("%T: %v", v, err)
	}
}

func strictErr(doc []byte, v any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

func TestKubernetesManifests(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir(), "kubernetes", "ctxtop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	if len(docs) != 3 {
		t.Fatalf("%d documents, want DaemonSet, Service, ServiceMonitor", len(docs))
	}
	var ds appsv1.DaemonSet
	var svc corev1.Service
	var sm serviceMonitor
	strict(t, docs[0], &ds)
	strict(t, docs[1], &svc)
	strict(t, docs[2], &sm)
	kinds := []string{ds.Kind + " " + ds.APIVersion, svc.Kind + " " + svc.APIVersion, sm.Kind + " " + sm.APIVersion}
	if diff := cmp.Diff([]string{"DaemonSet apps/v1", "Service v1", "ServiceMonitor monitoring.coreos.com/v1"}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}

	pod := ds.Spec.Template.Spec
	if !pod.HostPID {
		t.Error("hostPID is off: the node's processes would not be seen")
	}
	if pod.HostNetwork || pod.HostIPC {
		t.Error("host network or IPC namespace: not needed")
	}
	if len(pod.Tolerations) == 0 || pod.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("tolerations %+v: a node agent runs on tainted nodes too", pod.Tolerations)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("no security context with capabilities")
	}
	var add, drop []string
	for _, x := range sc.Capabilities.Add {
		add = append(add, string(x))
	}
	for _, x := range sc.Capabilities.Drop {
		drop = append(drop, string(x))
	}
	if diff := cmp.Diff([]string{"BPF", "PERFMON"}, add); diff != "" {
		t.Errorf("capabilities added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ALL"}, drop); diff != "" {
		t.Errorf("capabilities dropped (-want +got):\n%s", diff)
	}
	if sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("security context %+v: want unprivileged, no escalation, read-only root", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
	}
	// Every host path mounted, read-only, under the --host-root given.
	if !slices.Contains(c.Args, "--host-root=/host") || c.Args[0] != "serve" {
		t.Errorf("args %v: want serve --host-root=/host", c.Args)
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath == nil {
			t.Errorf("volume %s is not a host path", v.Name)
			continue
		}
		hostPaths[v.Name] = v.HostPath.Path
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("mount %s is writable", m.Name)
		}
		if want := "/host" + hostPaths[m.Name]; m.MountPath != want {
			t.Errorf("mount %s at %s, want %s (under --host-root)", m.Name, m.MountPath, want)
		}
		mounted[hostPaths[m.Name]] = true
	}
	for _, p := range []string{"/proc", "/sys", "/var/log", "/var/lib/docker/containers", "/var/lib/containers/storage"} {
		if !mounted[p] {
			t.Errorf("host %s not mounted", p)
		}
	}
	// The pieces find each other: the DaemonSet's pods by the Service,
	// the Service by the ServiceMonitor, and the port by its name.
	labels := ds.Spec.Template.Labels
	for k, v := range ds.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("DaemonSet selector %s=%s does not match its pods", k, v)
		}
	}
	for k, v := range svc.Spec.Selector {
		if labels[k] != v {
			t.Errorf("Service selector %s=%s does not match the pods", k, v)
		}
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%s does not match the Service", k, v)
		}
	}
	if !slices.Contains(sm.Spec.NamespaceSelector.MatchNames, svc.Namespace) {
		t.Errorf("ServiceMonitor looks in %v, the Service is in %s", sm.Spec.NamespaceSelector.MatchNames, svc.Namespace)
	}
	if len(c.Ports) != 1 || len(svc.Spec.Ports) != 1 || len(sm.Spec.Endpoints) != 1 ||
		svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name {
		t.Errorf("ports do not line up: container %+v, service %+v, monitor %+v", c.Ports, svc.Spec.Ports, sm.Spec.Endpoints)
	}
	if !strings.HasSuffix(listenArg(c.Args), ":10230") || c.Ports[0].ContainerPort != 10230 {
		t.Errorf("listen %q, container port %d: want :10230 on both", listenArg(c.Args), c.Ports[0].ContainerPort)
	}
}

func listenArg(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--web.listen-address="); ok {
			return v
		}
	}
	return ""
}

// A misspelt key fails the strict decoding: the check can fail.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      hostPid: true\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  tolerations: []\n",
	} {
		var ds appsv1.DaemonSet
		if err := strictErr([]byte(doc), &ds); err == nil {
			t.Errorf("decoded without error:\n%s", doc)
		}
	}
	var sm serviceMonitor
	if err := strictErr([]byte("apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nspec:\n  endpoints:\n  - port: metrics\n    scrapeInterval: 15s\n"), &sm); err == nil {
		t.Error("ServiceMonitor with scrapeInterval (for interval) decoded without error")
	}
}
