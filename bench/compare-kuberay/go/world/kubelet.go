package main

// The fake kubelet: a Pod of a Ray cluster becomes Running and Ready as soon as it is seen; a
// submitter Pod (owned by a Job) does what its `ray job submit ...; ray job logs --follow`
// command does against the fake dashboard (submit unless the submission id exists, follow
// until the job ends) and then Succeeds or Fails; a Pod being deleted is removed at once
// (there are no containers to stop). It is driven by one Pod informer and a bounded pool of
// workers, so it keeps up with thousands of Pods without polling.

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

type kubelet struct {
	client kubernetes.Interface
	ray    *dashboard
	work   chan *corev1.Pod
	nextIP atomic.Uint32

	mu      sync.Mutex
	started map[types.UID]bool // Pods this kubelet already runs or removes
	errors  atomic.Int64
}

func newKubelet(client kubernetes.Interface, ray *dashboard) *kubelet {
	return &kubelet{client: client, ray: ray, work: make(chan *corev1.Pod, 1<<16),
		started: map[types.UID]bool{}}
}

func (k *kubelet) run(ctx context.Context, workers int) cache.InformerSynced {
	factory := informers.NewSharedInformerFactory(k.client, 0)
	pods := factory.Core().V1().Pods().Informer()
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && k.claim(pod) {
			k.work <- pod
		}
	}
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	for i := 0; i < workers; i++ {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case pod := <-k.work:
					k.handle(ctx, pod)
				}
			}
		}()
	}
	factory.Start(ctx.Done())
	return pods.HasSynced
}

// claim: true the first time a Pod needs this kubelet (to start it, or to remove it).
func (k *kubelet) claim(pod *corev1.Pod) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := pod.UID
	if pod.DeletionTimestamp != nil {
		key = types.UID("deleting/" + string(pod.UID))
	} else if pod.Status.Phase != "" && pod.Status.Phase != corev1.PodPending {
		return false
	}
	if k.started[key] {
		return false
	}
	k.started[key] = true
	return true
}

func (k *kubelet) handle(ctx context.Context, pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		zero := int64(0)
		err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name,
			metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		k.report(err, "remove", pod)
		return
	}
	if !ownedByJob(pod) {
		k.report(k.setPhase(ctx, pod, corev1.PodRunning, true, nil), "start", pod)
		return
	}
	if err := k.setPhase(ctx, pod, corev1.PodRunning, true, nil); err != nil {
		k.report(err, "start", pod)
		return
	}
	go k.runSubmitter(ctx, pod)
}

// runSubmitter plays KubeRay's submitter command: `ray job status` || `ray job submit
// --no-wait`, then `ray job logs --follow` until the job ends.
func (k *kubelet) runSubmitter(ctx context.Context, pod *corev1.Pod) {
	id := envOf(pod, "RAY_JOB_SUBMISSION_ID")
	command := strings.Join(append(append([]string{}, pod.Spec.Containers[0].Command...), pod.Spec.Containers[0].Args...), " ")
	if _, exists := k.ray.finishesAt(id); !exists {
		k.ray.count("POST /api/jobs/ (submitter)")
		k.ray.submit(id, command)
	}
	end, _ := k.ray.finishesAt(id)
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Until(end)):
	}
	exit := int32(0)
	k.report(k.setPhase(ctx, pod, corev1.PodSucceeded, false, &exit), "finish", pod)
}

func (k *kubelet) report(err error, what string, pod *corev1.Pod) {
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		k.errors.Add(1)
		log.Printf("kubelet: %s %s/%s: %v", what, pod.Namespace, pod.Name, err)
	}
}

func ownedByJob(pod *corev1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Job" {
			return true
		}
	}
	return false
}

func envOf(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// setPhase writes the Pod's status as a kubelet would; a conflict is retried on a fresh read.
func (k *kubelet) setPhase(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase, ready bool, exit *int32) error {
	for attempt := 0; ; attempt++ {
		p := pod.DeepCopy()
		p.Status = k.status(p, phase, ready, exit)
		_, err := k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || attempt == 4 {
			return err
		}
		fresh, getErr := k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if getErr != nil {
			return getErr
		}
		if fresh.UID != pod.UID || fresh.DeletionTimestamp != nil {
			return nil
		}
		pod = fresh
	}
}

func (k *kubelet) status(pod *corev1.Pod, phase corev1.PodPhase, ready bool, exit *int32) corev1.PodStatus {
	now := metav1.Now()
	readiness := corev1.ConditionFalse
	if ready {
		readiness = corev1.ConditionTrue
	}
	ip := pod.Status.PodIP
	if ip == "" {
		n := k.nextIP.Add(1)
		ip = fmt.Sprintf("10.%d.%d.%d", 1+(n>>16)%250, (n>>8)%256, n%256)
	}
	st := corev1.PodStatus{Phase: phase, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "10.0.0.1",
		StartTime: &now}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		s := readiness
		if t == corev1.PodScheduled || t == corev1.PodInitialized {
			s = corev1.ConditionTrue
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
		if exit != nil {
			reason := "Completed"
			if *exit != 0 {
				reason = "Error"
			}
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: *exit, Reason: reason, StartedAt: now, FinishedAt: now}}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}
