package main

// The fake Ray dashboard both operators share: the Ray Jobs API routes an operator and a
// submitter call (submit, get, list, stop, delete, version), a job PENDING for pendingFor after
// its submission, RUNNING for runningFor, then SUCCEEDED. It counts every request by route and
// every accepted submission by the RayJob named in its entrypoint ("bench-rayjob=<name>"), so
// the harness can tell a duplicate submission from a repeated request.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

var rayJobMarker = regexp.MustCompile(`bench-rayjob=([a-z0-9-]+)`)

type fakeJob struct {
	submissionID string
	entrypoint   string
	submitted    time.Time
	stoppedAt    time.Time
}

type dashboard struct {
	pendingFor, runningFor time.Duration

	mu          sync.Mutex
	jobs        map[string]*fakeJob
	requests    map[string]int64 // "GET /api/jobs/{id}" -> count
	submissions map[string]int   // RayJob name -> accepted submissions
}

func newDashboard(pendingFor, runningFor time.Duration) *dashboard {
	return &dashboard{pendingFor: pendingFor, runningFor: runningFor,
		jobs: map[string]*fakeJob{}, requests: map[string]int64{}, submissions: map[string]int{}}
}

func (d *dashboard) status(j *fakeJob, now time.Time) (string, time.Time) {
	end := j.submitted.Add(d.pendingFor + d.runningFor)
	switch {
	case !j.stoppedAt.IsZero() && j.stoppedAt.Before(end):
		return "STOPPED", j.stoppedAt
	case now.Before(j.submitted.Add(d.pendingFor)):
		return "PENDING", time.Time{}
	case now.Before(end):
		return "RUNNING", time.Time{}
	}
	return "SUCCEEDED", end
}

// finishesAt: when the job of this submission id is terminal (false: no such job).
func (d *dashboard) finishesAt(id string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j, ok := d.jobs[id]
	if !ok {
		return time.Time{}, false
	}
	if !j.stoppedAt.IsZero() {
		return j.stoppedAt, true
	}
	return j.submitted.Add(d.pendingFor + d.runningFor), true
}

// submit accepts a job unless its submission id exists; true when it was new.
func (d *dashboard) submit(id, entrypoint string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, exists := d.jobs[id]; exists {
		return false
	}
	d.jobs[id] = &fakeJob{submissionID: id, entrypoint: entrypoint, submitted: time.Now()}
	if m := rayJobMarker.FindStringSubmatch(entrypoint); m != nil {
		d.submissions[m[1]]++
	}
	return true
}

func (d *dashboard) info(j *fakeJob, now time.Time) map[string]any {
	status, end := d.status(j, now)
	info := map[string]any{
		"type": "SUBMISSION", "job_id": nil, "submission_id": j.submissionID,
		"status": status, "entrypoint": j.entrypoint, "message": "Job " + strings.ToLower(status),
		"start_time": j.submitted.UnixMilli(), "end_time": nil, "metadata": map[string]string{},
		"runtime_env": map[string]any{},
	}
	if !end.IsZero() {
		info["end_time"] = end.UnixMilli()
	}
	return info
}

func (d *dashboard) count(route string) {
	d.mu.Lock()
	d.requests[route]++
	d.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (d *dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	rest, isJobs := strings.CutPrefix(path, "/api/jobs")
	id, action, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case path == "/api/version":
		d.count("GET /api/version")
		writeJSON(w, 200, map[string]string{"version": "4", "ray_version": "2.60.0", "ray_commit": "bench"})
	case isJobs && id == "" && r.Method == http.MethodPost:
		d.count("POST /api/jobs/")
		d.handleSubmit(w, r)
	case isJobs && id == "" && r.Method == http.MethodGet:
		d.count("GET /api/jobs/")
		d.handleList(w)
	case isJobs && action == "" && r.Method == http.MethodGet:
		d.count("GET /api/jobs/{id}")
		d.handleGet(w, id)
	case isJobs && action == "stop" && r.Method == http.MethodPost:
		d.count("POST /api/jobs/{id}/stop")
		d.handleStop(w, id)
	case isJobs && action == "" && r.Method == http.MethodDelete:
		d.count("DELETE /api/jobs/{id}")
		d.handleDelete(w, id)
	default:
		d.count("other")
		http.NotFound(w, r)
	}
}

func (d *dashboard) handleSubmit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Entrypoint   string `json:"entrypoint"`
		SubmissionID string `json:"submission_id"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.SubmissionID == "" {
		http.Error(w, "bad submission", 400)
		return
	}
	if !d.submit(req.SubmissionID, req.Entrypoint) {
		http.Error(w, "Job with submission_id "+req.SubmissionID+" already exists. Please use a different submission_id.", 400)
		return
	}
	writeJSON(w, 200, map[string]string{"job_id": req.SubmissionID, "submission_id": req.SubmissionID})
}

func (d *dashboard) handleGet(w http.ResponseWriter, id string) {
	d.mu.Lock()
	j, ok := d.jobs[id]
	var info map[string]any
	if ok {
		info = d.info(j, time.Now())
	}
	d.mu.Unlock()
	if !ok {
		http.Error(w, "Job "+id+" does not exist", 404)
		return
	}
	writeJSON(w, 200, info)
}

func (d *dashboard) handleList(w http.ResponseWriter) {
	d.mu.Lock()
	now := time.Now()
	infos := make([]map[string]any, 0, len(d.jobs))
	for _, j := range d.jobs {
		infos = append(infos, d.info(j, now))
	}
	d.mu.Unlock()
	writeJSON(w, 200, infos)
}

func (d *dashboard) handleStop(w http.ResponseWriter, id string) {
	d.mu.Lock()
	j, ok := d.jobs[id]
	stopped := false
	if ok {
		if status, _ := d.status(j, time.Now()); status == "PENDING" || status == "RUNNING" {
			j.stoppedAt, stopped = time.Now(), true
		}
	}
	d.mu.Unlock()
	if !ok {
		http.Error(w, "Job "+id+" does not exist", 404)
		return
	}
	writeJSON(w, 200, map[string]bool{"stopped": stopped})
}

func (d *dashboard) handleDelete(w http.ResponseWriter, id string) {
	d.mu.Lock()
	_, ok := d.jobs[id]
	delete(d.jobs, id)
	d.mu.Unlock()
	if !ok {
		http.Error(w, "Job "+id+" does not exist", 404)
		return
	}
	writeJSON(w, 200, map[string]bool{"deleted": true})
}

func (d *dashboard) snapshot() (map[string]int64, map[string]int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	requests := make(map[string]int64, len(d.requests))
	for k, v := range d.requests {
		requests[k] = v
	}
	submissions := make(map[string]int, len(d.submissions))
	for k, v := range d.submissions {
		submissions[k] = v
	}
	return requests, submissions
}
