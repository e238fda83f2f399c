package main

// The observer watches what the operator under test does, through the API server: when each
// RayJob first reached Running and Complete (or Failed), how many RayClusters and submitter
// Jobs were created for it, and its final attempt counters. It writes nothing.

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

type rayJobSeen struct {
	created, running, terminal time.Time
	status, reason             string
	failed, succeeded          int64
}

type observer struct {
	mu            sync.Mutex
	jobs          map[string]*rayJobSeen     // RayJob name -> what was seen
	clusters      map[string]map[string]bool // RayJob name -> RayCluster uids created for it
	submitters    map[string]map[string]bool // RayJob name -> submitter Job uids
	clustersAlive map[string]bool            // RayCluster uid -> not yet deleted
}

func newObserver() *observer {
	return &observer{jobs: map[string]*rayJobSeen{}, clusters: map[string]map[string]bool{},
		submitters: map[string]map[string]bool{}, clustersAlive: map[string]bool{}}
}

var (
	rayJobs     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	batchJobs   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

func (o *observer) run(ctx context.Context, client dynamic.Interface, namespace string) []cache.InformerSynced {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil)
	var synced []cache.InformerSynced
	watch := func(gvr schema.GroupVersionResource, onObject func(*unstructured.Unstructured, bool)) {
		informer := factory.ForResource(gvr).Informer()
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { onObject(obj.(*unstructured.Unstructured), false) },
			UpdateFunc: func(_, obj any) { onObject(obj.(*unstructured.Unstructured), false) },
			DeleteFunc: func(obj any) {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					onObject(u, true)
				} else if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					if u, ok := d.Obj.(*unstructured.Unstructured); ok {
						onObject(u, true)
					}
				}
			},
		})
		synced = append(synced, informer.HasSynced)
	}
	watch(rayJobs, o.onRayJob)
	watch(rayClusters, func(u *unstructured.Unstructured, deleted bool) {
		o.onChild(u, deleted, "RayJob", o.clusters, true)
	})
	watch(batchJobs, func(u *unstructured.Unstructured, deleted bool) {
		o.onChild(u, deleted, "RayJob", o.submitters, false)
	})
	factory.Start(ctx.Done())
	return synced
}

func (o *observer) created(name string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	seen := o.seen(name)
	seen.created = at
}

func (o *observer) seen(name string) *rayJobSeen {
	s, ok := o.jobs[name]
	if !ok {
		s = &rayJobSeen{}
		o.jobs[name] = s
	}
	return s
}

func (o *observer) onRayJob(u *unstructured.Unstructured, deleted bool) {
	if deleted {
		return
	}
	status, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus")
	reason, _, _ := unstructured.NestedString(u.Object, "status", "reason")
	failed, _, _ := unstructured.NestedInt64(u.Object, "status", "failed")
	succeeded, _, _ := unstructured.NestedInt64(u.Object, "status", "succeeded")
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.seen(u.GetName())
	s.status, s.reason, s.failed, s.succeeded = status, reason, failed, succeeded
	if status == "Running" && s.running.IsZero() {
		s.running = now
	}
	if (status == "Complete" || status == "Failed") && s.terminal.IsZero() {
		s.terminal = now
		if s.running.IsZero() {
			s.running = now // went through Running between two watch events
		}
	}
}

func (o *observer) onChild(u *unstructured.Unstructured, deleted bool, ownerKind string,
	into map[string]map[string]bool, trackAlive bool) {
	owner := ""
	for _, ref := range u.GetOwnerReferences() {
		if ref.Kind == ownerKind {
			owner = ref.Name
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	uid := string(u.GetUID())
	if trackAlive {
		if deleted {
			delete(o.clustersAlive, uid)
		} else {
			o.clustersAlive[uid] = true
		}
	}
	if owner == "" || deleted {
		return
	}
	if into[owner] == nil {
		into[owner] = map[string]bool{}
	}
	into[owner][uid] = true
}

// progress: RayJobs terminal, RayClusters still present.
func (o *observer) progress() (terminal int, clustersAlive int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.jobs {
		if !s.terminal.IsZero() {
			terminal++
		}
	}
	return terminal, len(o.clustersAlive)
}
