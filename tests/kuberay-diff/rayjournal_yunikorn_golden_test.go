// KubeRay's own YuniKorn integration on rayjournal's differential cases: generate.sh copies this
// file, unchanged, into a copy of KubeRay's ray-operator/controllers/ray/batchscheduler/yunikorn
// and runs it. For each case (RAYJOURNAL_DIFF_YUNIKORN/<name>.yaml: `object:` a RayCluster or a
// RayJob) it writes RAYJOURNAL_DIFF_GOLDEN/yunikorn-<name>.json: the metadata and schedulerName
// AddMetadataToChildResource gives a head Pod, and for a RayJob its RayCluster and its
// submitter's Pod template.
package yunikorn

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

func TestRayjournalYuniKornGolden(t *testing.T) {
	cases, golden := os.Getenv("RAYJOURNAL_DIFF_YUNIKORN"), os.Getenv("RAYJOURNAL_DIFF_GOLDEN")
	if cases == "" || golden == "" {
		t.Skip("RAYJOURNAL_DIFF_YUNIKORN and RAYJOURNAL_DIFF_GOLDEN name the directories")
	}
	files, _ := filepath.Glob(filepath.Join(cases, "*.yaml"))
	sort.Strings(files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Object map[string]any `json:"object"`
		}
		if err := yaml.UnmarshalStrict(text, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out, err := json.MarshalIndent(rayjournalYuniKornRun(t, c.Object), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(golden, "yunikorn-"+name+".json"), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("yunikorn-%s: written", name)
	}
}

func rayjournalYuniKornRun(t *testing.T, object map[string]any) map[string]any {
	text, _ := json.Marshal(object)
	y := &YuniKornScheduler{}
	ctx := context.Background()
	out := map[string]any{}
	head := &corev1.Pod{}
	if object["kind"] == "RayCluster" {
		var cluster rayv1.RayCluster
		if err := json.Unmarshal(text, &cluster); err != nil {
			t.Fatal(err)
		}
		y.AddMetadataToChildResource(ctx, &cluster, head, "headgroup")
		out["headPod"] = head.ObjectMeta
		out["headSchedulerName"] = head.Spec.SchedulerName
		return out
	}
	var job rayv1.RayJob
	if err := json.Unmarshal(text, &job); err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{}
	y.AddMetadataToChildResource(ctx, &job, cluster, "")
	out["rayCluster"] = cluster.ObjectMeta
	submitter := &corev1.PodTemplateSpec{}
	y.AddMetadataToChildResource(ctx, &job, submitter, "submittergroup")
	out["submitterTemplate"] = submitter.ObjectMeta
	out["submitterSchedulerName"] = submitter.Spec.SchedulerName
	return out
}
