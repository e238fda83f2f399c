// Command kuberay runs KubeRay's own RayCluster, RayService and RayJob reconcilers the way
// KubeRay's ray-operator/main.go wires them, with its defaults (reconcile concurrency 1, client
// QPS 100 and burst 200, the Job cache's label selector), and one difference: the Ray dashboard
// client it hands the RayJob reconciler talks to --dashboard-address (the benchmark's shared
// fake dashboard) instead of the head Service's cluster DNS name, which this machine cannot
// resolve. Leader election is off (one replica, outside a Pod: no namespace for the Lease) and
// the metrics and probe servers are off (they would bind every interface).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	k8szap "sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	configapi "github.com/ray-project/kuberay/ray-operator/apis/config/v1alpha1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/batchscheduler"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(rayv1.AddToScheme(scheme))
	utilruntime.Must(batchv1.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
}

// sharedDashboard is KubeRay's own ClientProvider except for the dashboard's address.
type sharedDashboard struct {
	configapi.Configuration
	address string
}

func (p sharedDashboard) GetDashboardClient(ctx context.Context, mgr manager.Manager) func(*rayv1.RayCluster, string) (dashboardclient.RayDashboardClientInterface, error) {
	inner := p.Configuration.GetDashboardClient(ctx, mgr)
	return func(cluster *rayv1.RayCluster, _ string) (dashboardclient.RayDashboardClientInterface, error) {
		return inner(cluster, p.address) // KubeRay adds the scheme
	}
}

func exitOnError(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "kuberay: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	var dashboard, featureGates string
	concurrency := configapi.DefaultReconcileConcurrency
	qps, burst := configapi.DefaultQPS, configapi.DefaultBurst
	flag.StringVar(&dashboard, "dashboard-address", "", "host:port of the shared Ray dashboard (default: each head Service's DNS name, as KubeRay)")
	flag.IntVar(&concurrency, "reconcile-concurrency", concurrency, "KubeRay's --reconcile-concurrency")
	flag.Float64Var(&qps, "qps", qps, "KubeRay's --qps")
	flag.IntVar(&burst, "burst", burst, "KubeRay's --burst")
	flag.StringVar(&featureGates, "feature-gates", "", "KubeRay's --feature-gates")
	opts := k8szap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	logger := k8szap.New(k8szap.UseFlagOptions(&opts))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	exitOnError(utilfeature.DefaultMutableFeatureGate.Set(featureGates), "--feature-gates")

	config := configapi.Configuration{ReconcileConcurrency: concurrency, QPS: &qps, Burst: &burst,
		DeleteRayJobAfterJobFinishes: os.Getenv(utils.DELETE_RAYJOB_CR_AFTER_JOB_FINISHES) == "true"}
	restConfig := ctrl.GetConfigOrDie()
	restConfig.UserAgent = "kuberay-operator/" + utils.KUBERAY_VERSION
	restConfig.QPS, restConfig.Burst = float32(qps), burst
	jobSelector, err := labels.NewRequirement(utils.KubernetesCreatedByLabelKey, selection.Equals, []string{utils.ComponentName})
	exitOnError(err, "job selector")
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{},
			ByObject: map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: labels.NewSelector().Add(*jobSelector)}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	exitOnError(err, "manager")
	ctx := ctrl.SetupSignalHandler()
	schedulers, err := batchscheduler.NewSchedulerManager(ctx, config, restConfig, mgr.GetClient())
	exitOnError(err, "batch scheduler manager")
	schedulers.AddToScheme(mgr.GetScheme())

	exitOnError(ray.NewReconciler(ctx, mgr, ray.RayClusterReconcilerOptions{
		IsOpenShift: utils.GetClusterType(), BatchSchedulerManager: schedulers,
	}).SetupWithManager(mgr, concurrency), "RayCluster controller")
	exitOnError(ray.NewRayServiceReconciler(ctx, mgr, config).SetupWithManager(mgr, concurrency), "RayService controller")
	// Without --dashboard-address, KubeRay's own provider: the head Service's cluster DNS name
	// (tests/kuberay-e2e runs it where that name resolves).
	var provider utils.ClientProvider = config
	if dashboard != "" {
		provider = sharedDashboard{config, strings.TrimPrefix(dashboard, "http://")}
	}
	exitOnError(ray.NewRayJobReconciler(ctx, mgr, ray.RayJobReconcilerOptions{BatchSchedulerManager: schedulers},
		provider).SetupWithManager(mgr, concurrency), "RayJob controller")
	exitOnError(mgr.Start(ctx), "manager")
}
