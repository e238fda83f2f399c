// KubeRay's own Pod builders on rayjournal's differential cases. generate.sh copies this file,
// unchanged, into a copy of KubeRay's ray-operator/controllers/ray (package ray, so the
// reconciler's unexported buildHeadPod and buildWorkerPod are called as KubeRay calls them) and
// runs it; it writes one golden JSON file per case, which rayjournal's KubeRayDiffTest compares
// with the Pods rayjournal builds from the same case, field by field.
//
// A case (RAYJOURNAL_DIFF_CASES/<name>.yaml): `cluster:` a RayCluster; optionally
// `configuration:` KubeRay's Configuration (its Pod fields). The golden file
// (RAYJOURNAL_DIFF_GOLDEN/<name>.json): {"kuberay": version, "head": Pod, "workers": {group: Pod}}
// with each group's first worker.
package ray

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

type rayjournalDiffCase struct {
	Cluster       rayv1.RayCluster `json:"cluster"`
	Configuration struct {
		HeadSidecarContainers   []corev1.Container `json:"headSidecarContainers,omitempty"`
		WorkerSidecarContainers []corev1.Container `json:"workerSidecarContainers,omitempty"`
		DefaultContainerEnvs    []corev1.EnvVar    `json:"defaultContainerEnvs,omitempty"`
		DefaultPodAnnotations   map[string]string  `json:"defaultPodAnnotations,omitempty"`
		DefaultPodLabels        map[string]string  `json:"defaultPodLabels,omitempty"`
	} `json:"configuration"`
}

func TestRayjournalGolden(t *testing.T) {
	cases, golden := os.Getenv("RAYJOURNAL_DIFF_CASES"), os.Getenv("RAYJOURNAL_DIFF_GOLDEN")
	if cases == "" || golden == "" {
		t.Skip("RAYJOURNAL_DIFF_CASES and RAYJOURNAL_DIFF_GOLDEN name the directories")
	}
	scheme := k8sruntime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cases, "*.yaml"))
	sort.Strings(files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c rayjournalDiffCase
		if err := yaml.UnmarshalStrict(text, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out, err := json.MarshalIndent(rayjournalBuild(scheme, c), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(golden, name+".json"), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: written", name)
	}
}

func rayjournalBuild(scheme *k8sruntime.Scheme, c rayjournalDiffCase) map[string]any {
	r := &RayClusterReconciler{Scheme: scheme, options: RayClusterReconcilerOptions{
		HeadSidecarContainers:   c.Configuration.HeadSidecarContainers,
		WorkerSidecarContainers: c.Configuration.WorkerSidecarContainers,
		DefaultContainerEnvs:    c.Configuration.DefaultContainerEnvs,
		DefaultPodAnnotations:   c.Configuration.DefaultPodAnnotations,
		DefaultPodLabels:        c.Configuration.DefaultPodLabels,
	}}
	ctx := context.Background()
	workers := map[string]corev1.Pod{}
	for _, group := range c.Cluster.Spec.WorkerGroupSpecs {
		workers[group.GroupName] = r.buildWorkerPod(ctx, c.Cluster, group, "", 0, 0)
	}
	return map[string]any{
		"kuberay": os.Getenv("RAYJOURNAL_DIFF_KUBERAY"),
		"head":    r.buildHeadPod(ctx, c.Cluster),
		"workers": workers,
	}
}
