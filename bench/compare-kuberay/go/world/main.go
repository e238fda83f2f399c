// Command world is the simulated rest of the cluster for bench/compare-kuberay: a fake
// kubelet and a fake Ray dashboard shared by whichever operator runs against the API server,
// the client that creates the benchmark's RayJobs, and the observer that times them. It writes
// a progress file while it runs and one JSON document at the end (see result below). Every
// server it starts binds 127.0.0.1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

type options struct {
	kubeconfig, namespace, mode, out, progress, dashboardAddr, portFile string
	count, workersPerCluster, createConcurrency                         int
	pending, running, timeout, cleanupTimeout                           time.Duration
	shutdownAfterFinish, waitForStart                                   bool
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of an identity with full rights")
	flag.StringVar(&o.namespace, "namespace", "bench", "namespace of the RayJobs")
	flag.StringVar(&o.mode, "mode", "HTTPMode", "submissionMode: HTTPMode or K8sJobMode")
	flag.IntVar(&o.count, "count", 100, "RayJobs to create")
	flag.IntVar(&o.workersPerCluster, "workers-per-cluster", 1, "worker replicas of each RayCluster")
	flag.IntVar(&o.createConcurrency, "create-concurrency", 32, "concurrent RayJob creates")
	flag.DurationVar(&o.pending, "ray-pending", 500*time.Millisecond, "a Ray job is PENDING this long")
	flag.DurationVar(&o.running, "ray-running", 2*time.Second, "then RUNNING this long, then SUCCEEDED")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up when not every RayJob is terminal by then")
	flag.DurationVar(&o.cleanupTimeout, "cleanup-timeout", 2*time.Minute, "wait this long for deleted RayClusters")
	flag.BoolVar(&o.shutdownAfterFinish, "shutdown-after-job-finishes", true, "spec.shutdownAfterJobFinishes")
	flag.StringVar(&o.dashboardAddr, "dashboard-listen", "127.0.0.1:0", "the fake Ray dashboard's address")
	flag.StringVar(&o.portFile, "port-file", "", "write the dashboard's host:port here once it listens")
	flag.BoolVar(&o.waitForStart, "wait-for-start", true, "create RayJobs only when the file <progress>.start exists")
	flag.StringVar(&o.progress, "progress", "", "progress file, rewritten every 0.5 s")
	flag.StringVar(&o.out, "out", "", "result JSON file (default stdout)")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	if o.mode != "HTTPMode" && o.mode != "K8sJobMode" {
		log.Fatalf("--mode %q: want HTTPMode or K8sJobMode", o.mode)
	}
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig %s: %v", o.kubeconfig, err)
	}
	config.QPS, config.Burst, config.UserAgent = 5000, 10000, "bench-world"
	kube := kubernetes.NewForConfigOrDie(config)
	dyn := dynamic.NewForConfigOrDie(config)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ray := newDashboard(o.pending, o.running)
	listener, err := net.Listen("tcp", o.dashboardAddr)
	if err != nil {
		log.Fatalf("dashboard listen %s: %v", o.dashboardAddr, err)
	}
	go func() { _ = http.Serve(listener, ray) }()
	if o.portFile != "" {
		writeFileAtomically(o.portFile, []byte(listener.Addr().String()))
	}
	ensureNamespace(ctx, kube, o.namespace)
	kubelet := newKubelet(kube, ray)
	obs := newObserver()
	synced := append(obs.run(ctx, dyn, o.namespace), kubelet.run(ctx, 32))
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		log.Fatal("informers did not sync")
	}
	waitForStartSignal(o)
	start := time.Now()
	createRayJobs(ctx, dyn, o, obs)
	allTerminal, allCleaned := awaitEnd(o, obs, start)
	requests, submissions := ray.snapshot()
	r := summarize(o, obs, start, allTerminal, allCleaned, requests, submissions)
	r.KubeletErrors = kubelet.errors.Load()
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) == nil {
		r.WorldCPUSeconds = float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
	}
	writeResult(o.out, r)
}

func ensureNamespace(ctx context.Context, kube kubernetes.Interface, ns string) {
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		log.Fatalf("create namespace %s: %v", ns, err)
	}
}

func waitForStartSignal(o options) {
	if !o.waitForStart || o.progress == "" {
		return
	}
	writeProgress(o.progress, map[string]any{"phase": "ready"})
	for {
		if _, err := os.Stat(o.progress + ".start"); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func rayJobName(i int) string { return fmt.Sprintf("bench-%05d", i) }

func createRayJobs(ctx context.Context, dyn dynamic.Interface, o options, obs *observer) {
	names := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < o.createConcurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				name := rayJobName(i)
				obs.created(name, time.Now())
				for attempt := 0; ; attempt++ {
					_, err := dyn.Resource(rayJobs).Namespace(o.namespace).Create(ctx, rayJobManifest(o, name), metav1.CreateOptions{})
					if err == nil || apierrors.IsAlreadyExists(err) {
						break
					}
					if attempt == 5 {
						log.Fatalf("create RayJob %s/%s: %v", o.namespace, name, err)
					}
					time.Sleep(time.Duration(100<<attempt) * time.Millisecond)
				}
			}
		}()
	}
	for i := 0; i < o.count; i++ {
		names <- i
	}
	close(names)
	wg.Wait()
}

func rayJobManifest(o options, name string) *unstructured.Unstructured {
	container := func(n string) map[string]any {
		resources := map[string]any{"cpu": "1", "memory": "1Gi"}
		return map[string]any{"name": n, "image": "rayproject/ray:2.46.0",
			"resources": map[string]any{"requests": resources, "limits": resources}}
	}
	podTemplate := func(n string) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []any{container(n)}}}
	}
	spec := map[string]any{
		"submissionMode":           o.mode,
		"entrypoint":               "echo bench-rayjob=" + name,
		"shutdownAfterJobFinishes": o.shutdownAfterFinish,
		"rayClusterSpec": map[string]any{
			"rayVersion":    "2.46.0",
			"headGroupSpec": map[string]any{"rayStartParams": map[string]any{}, "template": podTemplate("ray-head")},
			"workerGroupSpecs": []any{map[string]any{
				"groupName": "workers", "replicas": int64(o.workersPerCluster),
				"minReplicas": int64(o.workersPerCluster), "maxReplicas": int64(o.workersPerCluster),
				"rayStartParams": map[string]any{}, "template": podTemplate("ray-worker")}},
		},
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayJob",
		"metadata": map[string]any{"name": name, "namespace": o.namespace},
		"spec":     spec,
	}}
}

// awaitEnd waits until every RayJob is terminal, then (with shutdownAfterJobFinishes) until
// their RayClusters are gone, writing progress; false for a phase that timed out.
func awaitEnd(o options, obs *observer, start time.Time) (bool, bool) {
	deadline := start.Add(o.timeout)
	allTerminal, allCleaned := false, !o.shutdownAfterFinish
	for {
		terminal, alive := obs.progress()
		writeProgress(o.progress, map[string]any{"phase": "running", "created": o.count,
			"terminal": terminal, "rayclusters_alive": alive, "elapsed": time.Since(start).Seconds()})
		if terminal == o.count && !allTerminal {
			allTerminal, deadline = true, time.Now().Add(o.cleanupTimeout)
		}
		if allTerminal && (alive == 0 || !o.shutdownAfterFinish) {
			allCleaned = true
		}
		if (allTerminal && allCleaned) || time.Now().After(deadline) {
			return allTerminal, allCleaned
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type result struct {
	Mode                    string           `json:"mode"`
	RayJobs                 int              `json:"rayjobs"`
	AllTerminal             bool             `json:"all_terminal"`
	AllClustersDeleted      bool             `json:"all_rayclusters_deleted"`
	Complete                int              `json:"complete"`
	Failed                  int              `json:"failed"`
	FailedReasons           map[string]int   `json:"failed_reasons"`
	WallSeconds             float64          `json:"wall_seconds"`
	RayJobsPerMinute        float64          `json:"rayjobs_per_minute"`
	CleanupSeconds          float64          `json:"cleanup_seconds"`
	ToRunningP50            float64          `json:"to_running_p50_s"`
	ToRunningP95            float64          `json:"to_running_p95_s"`
	ToCompleteP50           float64          `json:"to_complete_p50_s"`
	ToCompleteP95           float64          `json:"to_complete_p95_s"`
	RayClusters             int              `json:"rayclusters_created"`
	RayJobsWithExtraCluster int              `json:"rayjobs_with_more_than_one_raycluster"`
	SubmitterJobs           int              `json:"submitter_jobs_created"`
	Submissions             int              `json:"ray_submissions"`
	DuplicateSubmissions    int              `json:"duplicate_ray_submissions"`
	RayJobsNotSubmitted     int              `json:"rayjobs_never_submitted"`
	ExtraAttempts           int64            `json:"extra_attempts"`
	DashboardRequests       map[string]int64 `json:"dashboard_requests"`
	DashboardPerRayJob      float64          `json:"dashboard_requests_per_rayjob"`
	KubeletErrors           int64            `json:"kubelet_errors"`
	WorldCPUSeconds         float64          `json:"world_cpu_seconds"`
}

func summarize(o options, obs *observer, start time.Time, allTerminal, allCleaned bool,
	requests map[string]int64, submissions map[string]int) result {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	r := result{Mode: o.mode, RayJobs: o.count, AllTerminal: allTerminal, AllClustersDeleted: allCleaned,
		DashboardRequests: requests, FailedReasons: map[string]int{}}
	var toRunning, toComplete []float64
	var last time.Time
	for name, s := range obs.jobs {
		switch s.status {
		case "Complete":
			r.Complete++
		case "Failed":
			r.Failed++
			r.FailedReasons[s.reason]++
		}
		r.ExtraAttempts += s.failed // every failed attempt is one more than a clean run has
		if !s.running.IsZero() {
			toRunning = append(toRunning, s.running.Sub(s.created).Seconds())
		}
		if !s.terminal.IsZero() {
			toComplete = append(toComplete, s.terminal.Sub(s.created).Seconds())
			if s.terminal.After(last) {
				last = s.terminal
			}
		}
		if len(obs.clusters[name]) > 1 {
			r.RayJobsWithExtraCluster++
		}
		r.RayClusters += len(obs.clusters[name])
		r.SubmitterJobs += len(obs.submitters[name])
		n := submissions[name]
		r.Submissions += n
		if n > 1 {
			r.DuplicateSubmissions += n - 1
		}
		if n == 0 {
			r.RayJobsNotSubmitted++
		}
	}
	if !last.IsZero() {
		r.WallSeconds = last.Sub(start).Seconds()
		r.RayJobsPerMinute = float64(r.Complete) / r.WallSeconds * 60
		r.CleanupSeconds = time.Since(last).Seconds()
	}
	r.ToRunningP50, r.ToRunningP95 = percentile(toRunning, 0.5), percentile(toRunning, 0.95)
	r.ToCompleteP50, r.ToCompleteP95 = percentile(toComplete, 0.5), percentile(toComplete, 0.95)
	var total int64
	for route, n := range requests {
		if route != "POST /api/jobs/ (submitter)" {
			total += n
		}
	}
	r.DashboardPerRayJob = float64(total) / float64(o.count)
	return r
}

func percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sort.Float64s(values)
	i := int(p*float64(len(values)-1) + 0.5)
	return values[i]
}

func writeProgress(path string, v any) {
	if path == "" {
		return
	}
	data, _ := json.Marshal(v)
	writeFileAtomically(path, data)
}

func writeFileAtomically(path string, data []byte) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		log.Fatalf("write %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		log.Fatalf("rename %s: %v", tmp, err)
	}
}

func writeResult(path string, r result) {
	data, _ := json.MarshalIndent(r, "", "  ")
	if path == "" {
		fmt.Println(string(data))
		return
	}
	writeFileAtomically(path, append(data, '\n'))
}
