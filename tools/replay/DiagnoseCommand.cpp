// rayjournal-replay diagnose and diff: the journal against the live cluster.
#include "ReplayCommon.h"

#include <map>
#include <set>

#include "adapters/TimeFormat.h"
#include "events/EventCodec.h"
#include "events/JournalBodies.h"
#include "events/RecordJson.h"
#include "adapters/sim/SimKube.h"
#include "adapters/sim/SimRay.h"
#include "controller/JsonAccess.h"
#include "controller/raycluster/RayClusterViews.h"
#include "controller/rayjob/Children.h"
#include "model/Names.h"

namespace rayjournal::replay {

namespace {

// The checklist of one RayJob as a document: per check what the journal, Kubernetes and Ray
// say, side by side, a verdict, and for a problem the next command to run. The text form
// (printDiagnosis) renders the same document.
struct Diagnosis {
  json report;
  std::string ns, name;
  void check(const std::string& what, const std::string& journal, const std::string& kube,
             const std::string& ray, const std::string& problem = "",
             const std::string& next = "") {
    json c = {{"check", what}, {"journal", journal}, {"kubernetes", kube}, {"ray", ray},
              {"verdict", problem.empty() ? "ok" : "problem"}};
    if (!problem.empty()) {
      c["problem"] = problem;
      c["next"] = next.empty() ? timelineLine() : next;
      report["problems"].push_back(problem);
    }
    report["checks"].push_back(std::move(c));
  }
  std::string timelineLine() const { return "rayjournal-replay timeline " + ns + "/" + name; }
  std::string kubectl(const std::string& args) const { return "kubectl -n " + ns + " " + args; }
};

std::string presence(const std::optional<json>& obj, bool owned) {
  return !obj ? "absent" : owned ? "present, owned by this RayJob" : "present, NOT owned by this RayJob";
}

void diagnoseIdentities(Diagnosis& d, const std::optional<projection::JobState>& facts,
                        const std::optional<json>& doc) {
  json status = doc ? doc->value("status", json::object()) : json::object();
  const bool any = facts && !facts->attempts.empty();
  const std::string jCluster = any ? facts->attempts.back().rayClusterName : "";
  const std::string jId = any ? facts->attempts.back().jobId : "";
  const std::string kCluster = status.value("rayClusterName", ""), kId = status.value("jobId", "");
  d.report["journal"] = {{"attempt", facts ? facts->attempt : 0}, {"rayClusterName", jCluster},
                         {"submissionId", jId}};
  d.report["kubernetes"] = {{"exists", doc.has_value()}, {"rayClusterName", kCluster},
                            {"submissionId", kId},
                            {"deploymentStatus", status.value("jobDeploymentStatus", "")}};
  if (!doc) d.check("RayJob", facts ? "known" : "unknown", "absent", "", "the RayJob does not exist in Kubernetes", d.kubectl("get rayjob " + d.name));
  if (!facts) d.check("journal", "no record of this RayJob", doc ? "present" : "absent", "", "the journal has no record of this RayJob", "rayjournal-replay summary");
  if (!doc || !facts) return;
  const bool differ = !kCluster.empty() && (kCluster != jCluster || kId != jId);
  d.check("identities (attempt " + std::to_string(facts->attempt) + ")",
          "RayCluster " + jCluster + ", submission " + jId,
          "RayCluster " + kCluster + ", submission " + kId + ", " +
              status.value("jobDeploymentStatus", ""),
          "",
          differ ? "journal and Kubernetes disagree on the current identities (Kubernetes is "
                   "authoritative)"
                 : "",
          d.timelineLine());
}

std::string envOf(const json& job, const char* name) {
  const json& containers = controller::arrayAt(
      controller::objectAt(controller::objectAt(controller::objectAt(job, "spec"), "template"), "spec"),
      "containers");
  if (containers.empty()) return "";
  for (const auto& e : controller::arrayAt(containers[0], "env"))
    if (e.value("name", "") == name) return e.value("value", "");
  return "";
}

void diagnoseSubmitter(Diagnosis& d, kube::KubeClient& kube, const json& rayjob,
                       const std::string& uid, const std::string& jobId, bool expected) {
  auto job = kube.get("Job", d.ns, d.name);
  bool owned = job && controller::ownedBy(*job, uid);
  std::string problem;
  if (expected && !job) problem = "Job " + d.name + " is missing";
  if (job && !owned) problem = "Job " + d.name + " is not owned by this RayJob (uid " + uid + ")";
  std::string runs = job ? envOf(*job, "RAY_JOB_SUBMISSION_ID") : "";
  if (job && owned && !jobId.empty() && !runs.empty() && runs != jobId)
    problem = "submitter Job " + d.name + " runs submission " + runs + ", not this attempt's " + jobId;
  std::string pods;
  for (const auto& p : kube.list("Pod", d.ns, {{"job-name", d.name}}))
    pods += (pods.empty() ? "" : ", ") + controller::stringAt(p["metadata"], "name") + " " +
            controller::stringAt(controller::objectAt(p, "status"), "phase");
  (void)rayjob;
  d.check("submitter Job " + d.name, "submission " + jobId,
          presence(job, owned) + (runs.empty() ? "" : ", submission " + runs) +
              (pods.empty() ? "" : "; Pods: " + pods),
          "", problem, d.kubectl("describe job " + d.name));
}

void diagnoseChildren(Diagnosis& d, kube::KubeClient& kube, const std::optional<json>& doc) {
  if (!doc) return;
  json status = doc->value("status", json::object());
  const std::string uid = (*doc)["metadata"].value("uid", "");
  const std::string cluster = status.value("rayClusterName", "");
  const std::string deployment = status.value("jobDeploymentStatus", "");
  const bool live = deployment == "Initializing" || deployment == "Running";
  const bool selector = !(*doc)["spec"].value("clusterSelector", json::object()).empty();
  if (!cluster.empty()) {
    auto obj = kube.get("RayCluster", d.ns, cluster);
    bool owned = obj && (selector || controller::ownedBy(*obj, uid));
    std::string problem = live && !obj && !selector ? "RayCluster " + cluster + " is missing"
                          : obj && !owned ? "RayCluster " + cluster + " is not owned by this RayJob (uid " + uid + ")"
                                          : "";
    d.check("RayCluster " + cluster, "this attempt's cluster", presence(obj, owned) +
            (obj ? ", state " + controller::stringAt(controller::objectAt(*obj, "status"), "state") : ""),
            "", problem, d.kubectl("get raycluster " + cluster + " -o yaml"));
    auto head = kube.get("Pod", d.ns, model::headPodName(cluster));
    d.check("head Pod " + model::headPodName(cluster), "", !head ? "absent" :
            "present, " + controller::stringAt(controller::objectAt(*head, "status"), "phase"), "");
    std::string svc = controller::headServiceNameOf(
        cluster, obj ? controller::objectAt(*obj, "spec") : json::object());
    d.check("head Service " + svc, "", kube.get("Service", d.ns, svc) ? "present" : "absent", "");
  }
  if (!selector && deployment == "Running") {
    const std::string name = model::rayJobHeadServiceName(d.name);
    auto svc = kube.get("Service", d.ns, name);
    std::string selects = svc ? controller::stringAt(controller::objectAt(controller::objectAt(*svc, "spec"), "selector"), "ray.io/cluster") : "";
    d.check("RayJob head Service " + name, "selects " + cluster,
            svc ? "present, selects " + selects : "absent", "",
            svc && selects != cluster ? "Service " + name + " selects RayCluster " + selects + ", not " + cluster : "",
            d.kubectl("get service " + name + " -o yaml"));
  }
  if ((*doc)["spec"].value("submissionMode", "K8sJobMode") == "K8sJobMode")
    diagnoseSubmitter(d, kube, *doc, uid, status.value("jobId", ""), deployment == "Running");
}

void diagnoseRay(Diagnosis& d, Sources& sources, const std::optional<projection::JobState>& facts,
                 const std::optional<json>& doc) {
  json status = doc ? doc->value("status", json::object()) : json::object();
  const std::string dashboard = status.value("dashboardURL", "");
  const std::string id = status.value("jobId", "");
  if (dashboard.empty() || id.empty()) return;
  json& r = d.report["ray"];
  r = {{"submissionId", id}, {"dashboard", dashboard}};
  const bool journaled = facts && facts->submissions.count(id);
  const std::string says = journaled ? "submission " + id + " confirmed (journaled)" : "submission " + id;
  try {
    useClusterToken(sources, d.ns, status.value("rayClusterName", ""), dashboard);
    auto info = sources.ray->getJob(dashboard, id);
    r["present"] = info.has_value();
    if (info) r["status"] = info->status;
    d.check("Ray record of " + id, says, "", info ? "present, " + info->status : "absent",
            !info && journaled ? "Ray lost the record of a journaled submission" : "",
            "curl http://" + dashboard + "/api/jobs/" + id);
  } catch (const ray::RayError& e) {
    r["error"] = e.what();
    d.report["unreadable"].push_back("Ray dashboard " + dashboard + ": " + e.what());
    d.check("Ray record of " + id, says, "", std::string("cannot ask: ") + e.what());
  }
}

void diagnoseHistory(Diagnosis& d, kube::KubeClient& kube,
                     const std::optional<projection::JobState>& facts) {
  d.report["inDoubt"] = json::array();
  d.report["earlierAttempts"] = json::array();
  if (!facts) return;
  for (uint64_t seq : facts->inDoubt)
    d.report["inDoubt"].push_back({{"seq", seq},
                                   {"action", events::actionName(facts->intents.at(seq).action)},
                                   {"target", facts->intents.at(seq).target}});
  std::string resolved;
  for (const auto& [seq, f] : facts->intents)
    if (f.outcome && events::isResolution(*f.outcome))
      resolved += (resolved.empty() ? "" : ", ") + std::string("#") + std::to_string(seq) + " " +
                  events::actionName(f.action) + " " + f.target + ": " + events::resultName(*f.outcome);
  d.check("intents in doubt", std::to_string(facts->inDoubt.size()) + " in doubt" +
          (resolved.empty() ? "" : "; resolved after restarts: " + resolved), "", "",
          facts->inDoubt.empty() ? "" : std::to_string(facts->inDoubt.size()) + " intents in doubt");
  for (size_t i = 0; i + 1 < facts->attempts.size(); ++i) {
    const auto& a = facts->attempts[i];
    d.report["earlierAttempts"].push_back({{"attempt", a.attempt}, {"started", toRfc3339(a.startMs)},
                                           {"rayClusterName", a.rayClusterName}, {"submissionId", a.jobId}});
    auto left = a.rayClusterName.empty() ? std::nullopt : kube.get("RayCluster", d.ns, a.rayClusterName);
    bool going = left && (*left)["metadata"].contains("deletionTimestamp");
    d.check("earlier attempt " + std::to_string(a.attempt), "RayCluster " + a.rayClusterName + ", submission " + a.jobId,
            !left ? "RayCluster gone" : going ? "RayCluster being deleted" : "RayCluster still exists", "",
            left && !going && a.rayClusterName != facts->attempts.back().rayClusterName
                ? "RayCluster " + a.rayClusterName + " of attempt " + std::to_string(a.attempt) + " still exists"
                : "",
            d.kubectl("get raycluster " + a.rayClusterName));
  }
}

void printDiagnosis(const json& r, std::ostream& out) {
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  out << "RayJob " << text(r["rayjob"]) << " (against " << text(r["source"]) << ")\n";
  for (const auto& c : r["checks"]) {
    out << (c["verdict"] == "ok" ? "  ok  " : "  !!  ") << text(c["check"]) << "\n";
    for (const char* side : {"journal", "kubernetes", "ray"})
      if (!text(c[side]).empty()) out << "        " << side << ": " << text(c[side]) << "\n";
    if (c.contains("problem"))
      out << "        problem: " << text(c["problem"]) << "\n        next: " << text(c["next"]) << "\n";
  }
  for (const auto& u : r["unreadable"]) out << "  ? cannot read " << text(u) << "\n";
  if (!r["unreadable"].empty())
    out << "incomplete: a source could not be read (" << r["problems"].size()
        << " problems found in what could)\n";
  else
    out << (r["problems"].empty() ? "journal and world agree\n"
                                  : std::to_string(r["problems"].size()) + " problems found\n");
}

}  // namespace

int diagnose(const std::string& dir, const Target& target, const LiveOptions& live,
             Output output, std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto holder = projectionAt(*journal, journal->latestSeq());
    auto facts = holder->job(target.ns + "/" + target.name);
    Sources sources = sourcesOrThrow(live);
    auto doc = sources.kube->get("RayJob", target.ns, target.name);
    Diagnosis d{{{"rayjob", target.ns + "/" + target.name},
                 {"source", sources.describe},
                 {"checks", json::array()},
                 {"problems", json::array()},
                 {"unreadable", json::array()}},
                target.ns,
                target.name};
    diagnoseIdentities(d, facts, doc);
    diagnoseChildren(d, *sources.kube, doc);
    diagnoseRay(d, sources, facts, doc);
    diagnoseHistory(d, *sources.kube, facts);
    const bool incomplete = !d.report["unreadable"].empty();
    d.report["verdict"] = incomplete ? "incomplete" : d.report["problems"].empty() ? "ok" : "problems";
    if (output == Output::Json)
      out << d.report.dump(2) << "\n";
    else
      printDiagnosis(d.report, out);
    return incomplete ? 2 : d.report["problems"].empty() ? 0 : 1;
  });
}

int diffAgainstKube(const std::string& dir, const LiveOptions& live, Output output,
                    std::ostream& out) {
  return guarded(out, [&] {
    auto journal = openReadOnly(dir);
    auto holder = projectionAt(*journal, journal->latestSeq());
    auto& p = *holder;
    Sources sources = sourcesOrThrow(live);
    kube::KubeClient& kube = *sources.kube;
    json drifted = json::array();
    json all = p.toJson();
    for (const auto& [key, s] : all.items()) {
      auto slash = key.find('/');
      auto doc = kube.get("RayJob", key.substr(0, slash), key.substr(slash + 1));
      std::string expected = s.value("last_deployment_status", "");
      std::string actual =
          doc ? doc->value("status", json::object()).value("jobDeploymentStatus", "") : "(deleted)";
      if (doc && (*doc)["metadata"].value("uid", "") != s.value("uid", ""))
        actual += " (recreated, uid differs)";
      if (actual != expected && actual != "(deleted)")
        drifted.push_back({{"rayjob", key}, {"journalLastWrote", expected}, {"kubernetesHas", actual}});
    }
    if (output == Output::Json) {
      out << json{{"drifted", drifted}, {"rayjobs", all.size()}}.dump(2) << "\n";
      return drifted.empty() ? 0 : 1;
    }
    for (const auto& d : drifted)
      out << d["rayjob"].get<std::string>() << ": journal last wrote "
          << d["journalLastWrote"].get<std::string>() << ", Kubernetes has "
          << d["kubernetesHas"].get<std::string>() << "\n";
    out << drifted.size() << " RayJobs drifted\n";
    return drifted.empty() ? 0 : 1;
  });
}

}  // namespace rayjournal::replay
