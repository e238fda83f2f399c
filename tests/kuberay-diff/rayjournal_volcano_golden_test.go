// KubeRay's own Volcano integration on rayjournal's differential cases: generate.sh copies this
// file, unchanged, into a copy of KubeRay's ray-operator/controllers/ray/batchscheduler/volcano
// and runs it against controller-runtime's fake client. For each case
// (RAYJOURNAL_DIFF_VOLCANO/<name>.yaml: `object:` a RayCluster or a RayJob, optionally
// `cluster:` the RayJob's RayCluster as it is when the RayJob finishes) it writes
// RAYJOURNAL_DIFF_GOLDEN/volcano-<name>.json: the PodGroup DoBatchSchedulingOnSubmission makes,
// the metadata AddMetadataToChildResource gives a head Pod (and, for a RayJob, its RayCluster and
// its submitter's Pod template), and the PodGroup after CleanupOnCompletion.
package volcano

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
	volcanoschedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

type rayjournalVolcanoCase struct {
	Object  map[string]any    `json:"object"`
	Cluster *rayv1.RayCluster `json:"cluster,omitempty"`
}

func TestRayjournalVolcanoGolden(t *testing.T) {
	cases, golden := os.Getenv("RAYJOURNAL_DIFF_VOLCANO"), os.Getenv("RAYJOURNAL_DIFF_GOLDEN")
	if cases == "" || golden == "" {
		t.Skip("RAYJOURNAL_DIFF_VOLCANO and RAYJOURNAL_DIFF_GOLDEN name the directories")
	}
	files, _ := filepath.Glob(filepath.Join(cases, "*.yaml"))
	sort.Strings(files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c rayjournalVolcanoCase
		if err := yaml.UnmarshalStrict(text, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out, err := json.MarshalIndent(rayjournalVolcanoRun(t, c), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(golden, "volcano-"+name+".json"), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("volcano-%s: written", name)
	}
}

func rayjournalDecode(t *testing.T, in map[string]any, out any) {
	text, _ := json.Marshal(in)
	if err := json.Unmarshal(text, out); err != nil {
		t.Fatal(err)
	}
}

func rayjournalPodGroup(t *testing.T, cli client.Client, owner metav1.Object) any {
	var pg volcanoschedulingv1beta1.PodGroup
	key := types.NamespacedName{Namespace: owner.GetNamespace(), Name: getAppPodGroupName(owner)}
	if err := cli.Get(context.Background(), key, &pg); err != nil {
		return nil
	}
	pg.APIVersion, pg.Kind = "scheduling.volcano.sh/v1beta1", "PodGroup"
	pg.ResourceVersion = ""
	return pg
}

func rayjournalVolcanoRun(t *testing.T, c rayjournalVolcanoCase) map[string]any {
	scheme := k8sruntime.NewScheme()
	_ = rayv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	_ = volcanoschedulingv1beta1.AddToScheme(scheme)
	builder := fake.NewClientBuilder().WithScheme(scheme)
	if c.Cluster != nil {
		builder = builder.WithObjects(c.Cluster)
	}
	cli := builder.Build()
	v := &VolcanoBatchScheduler{cli: cli}
	ctx := context.Background()
	out := map[string]any{}
	head := &corev1.Pod{}
	if c.Object["kind"] == "RayCluster" {
		var cluster rayv1.RayCluster
		rayjournalDecode(t, c.Object, &cluster)
		out["submissionError"] = errorText(v.DoBatchSchedulingOnSubmission(ctx, &cluster))
		out["podGroup"] = rayjournalPodGroup(t, cli, &cluster)
		v.AddMetadataToChildResource(ctx, &cluster, head, "headgroup")
		out["headPod"] = head.ObjectMeta
		out["headSchedulerName"] = head.Spec.SchedulerName
		return out
	}
	var job rayv1.RayJob
	rayjournalDecode(t, c.Object, &job)
	out["submissionError"] = errorText(v.DoBatchSchedulingOnSubmission(ctx, &job))
	out["podGroup"] = rayjournalPodGroup(t, cli, &job)
	cluster := &rayv1.RayCluster{}
	v.AddMetadataToChildResource(ctx, &job, cluster, "")
	out["rayCluster"] = cluster.ObjectMeta
	submitter := &corev1.PodTemplateSpec{}
	v.AddMetadataToChildResource(ctx, &job, submitter, "submittergroup")
	out["submitterTemplate"] = submitter.ObjectMeta
	out["submitterSchedulerName"] = submitter.Spec.SchedulerName
	if job.Status.RayClusterName != "" {
		_, err := v.CleanupOnCompletion(ctx, &job)
		out["cleanupError"] = errorText(err)
		out["podGroupAfterCleanup"] = rayjournalPodGroup(t, cli, &job)
	}
	return out
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
