// The Executor carries out plans the write-ahead way; several decisions share one journal flush.
#include "controller/Executor.h"

#include <gtest/gtest.h>

#include "adapters/sim/SimKube.h"
#include "controller/EventNotes.h"
#include "adapters/sim/SimRay.h"
#include "events/EventCodec.h"
#include "wal/MemoryStorage.h"

namespace rayjournal::controller {
namespace {

using nlohmann::json;

struct ExecutorTest : ::testing::Test {
  ManualClock clock;
  sim::SimKube kube{clock};
  sim::SimRay ray{kube, clock};
  std::unique_ptr<wal::Journal> journal =
      wal::Journal::open(std::make_shared<wal::MemoryStorage>());
  Executor executor{*journal, kube, ray, clock};

  // The RayJob "j" and its RayCluster "j-abcde", present in Kubernetes.
  Subject rayJobWithItsCluster() {
    Subject job;
    job.kind = "RayJob";
    job.ns = "default";
    job.name = "j";
    job.uid = "uid-j";
    kube.create("RayCluster", {{"apiVersion", "ray.io/v1"},
                               {"kind", "RayCluster"},
                               {"metadata", {{"name", "j-abcde"}, {"namespace", "default"}}}});
    return job;
  }
  static Subject cluster(const std::string& name) {
    Subject s;
    s.kind = "RayCluster";
    s.ns = "default";
    s.name = name;
    s.uid = "uid-" + name;
    return s;
  }
  static Intent createPod(const std::string& name, const std::string& ownerUid) {
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata",
              {{"name", name},
               {"namespace", "default"},
               {"ownerReferences",
                json::array({{{"kind", "RayCluster"}, {"uid", ownerUid}, {"controller", true}}})}}},
             {"spec", {{"containers", json::array({{{"name", "ray"}}})}}}};
    return {Action::CreatePod, name, std::make_shared<json>(pod)};
  }
  std::vector<std::string> outcomes() {
    std::vector<std::string> out;
    journal->scan(1, [&](const wal::Record& r) {
      if (r.type == wal::RecordType::Outcome) {
        events::OutcomeBody o = events::decodeOutcome(r);
        out.push_back(o.target + "=" + events::resultName(o.result));
      }
      return true;
    });
    return out;
  }
};

TEST_F(ExecutorTest, OneFlushMakesTheIntentsOfEveryDecisionOfABatchDurable) {
  Subject a = cluster("a"), b = cluster("b");
  Plan pa, pb;
  pa.intents.push_back(createPod("a-head", a.uid));
  pb.intents.push_back(createPod("b-head", b.uid));
  pb.intents.push_back(createPod("b-worker-0", b.uid));
  uint64_t syncsBefore = journal->stats().syncs;
  auto results = executor.executeAll({{&a, &pa}, {&b, &pb}});
  EXPECT_EQ(journal->stats().syncs - syncsBefore, 1u);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok && results[1].ok);
  EXPECT_EQ(results[1].executed, 2);
  EXPECT_TRUE(kube.get("Pod", "default", "b-worker-0"));
  EXPECT_EQ(outcomes(), (std::vector<std::string>{"a-head=ok", "b-head=ok", "b-worker-0=ok"}));
}

TEST_F(ExecutorTest, AFailingIntentAbandonsOnlyTheRestOfItsOwnPlan) {
  kube.create("Pod", *createPod("a-head", "someone-else").object);  // foreign: never adopted
  Subject a = cluster("a"), b = cluster("b");
  Plan pa, pb;
  pa.intents.push_back(createPod("a-head", a.uid));
  pa.intents.push_back(createPod("a-worker-0", a.uid));
  pb.intents.push_back(createPod("b-head", b.uid));
  auto results = executor.executeAll({{&a, &pa}, {&b, &pb}});
  EXPECT_FALSE(results[0].ok);
  EXPECT_NE(results[0].error.find("a-head"), std::string::npos) << results[0].error;
  EXPECT_TRUE(results[1].ok);
  EXPECT_FALSE(kube.get("Pod", "default", "a-worker-0"));
  EXPECT_TRUE(kube.get("Pod", "default", "b-head"));
  EXPECT_EQ(outcomes(),
            (std::vector<std::string>{"a-head=error", "a-worker-0=abandoned", "b-head=ok"}));
}

TEST_F(ExecutorTest, AnIntentThatThrowsSomethingUnexpectedEndsAsAnErrorOutcome) {
  Subject a = cluster("a");
  Plan plan;
  plan.intents.push_back({Action::CreatePod, "bad", std::make_shared<json>("not an object")});
  auto results = executor.executeAll({{&a, &plan}});
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(outcomes(), std::vector<std::string>{"bad=error"}) << "not left in doubt";
}

TEST_F(ExecutorTest, DecisionsWithNothingToDoWriteNothing) {
  Subject a = cluster("a");
  Plan empty;
  uint64_t before = journal->latestSeq();
  auto results = executor.executeAll({{&a, &empty}});
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(journal->latestSeq(), before);
}

// What the Ray dashboard was asked, without a cluster behind it.
class RecordingRay : public ray::RayJobsClient {
 public:
  std::optional<ray::JobInfo> getJob(const std::string&, const std::string&) override {
    return std::nullopt;
  }
  ray::SubmitResult submit(const std::string&, const ray::SubmitRequest& request) override {
    submitted.push_back(request);
    return ray::SubmitResult::Submitted;
  }
  bool stop(const std::string&, const std::string&) override { return true; }
  std::vector<ray::SubmitRequest> submitted;
};

// HTTPMode submits what K8sJobMode's `ray job submit --entrypoint-resources` would: KubeRay's
// ConvertRayJobToReq parses spec.entrypointResources (a JSON object) into the request.
TEST_F(ExecutorTest, AnHttpSubmissionCarriesTheEntrypointResources) {
  RecordingRay recording;
  Executor http{*journal, kube, recording, clock};
  Subject job = cluster("j");
  job.kind = "RayJob";
  Plan plan;
  plan.intents.push_back({Action::SubmitRayJob, "j-1",
                          std::make_shared<json>(json{{"dashboard", "http://h:8265"},
                                                      {"submissionId", "j-1"},
                                                      {"entrypoint", "python x.py"},
                                                      {"entrypointNumCpus", 1.5},
                                                      {"entrypointResources", R"({"Custom_1": 2, "tpu": 0.5})"}})});
  ASSERT_TRUE(http.execute(job, plan).ok);
  ASSERT_EQ(recording.submitted.size(), 1u);
  EXPECT_EQ(recording.submitted[0].entrypointResources,
            (std::map<std::string, double>{{"Custom_1", 2}, {"tpu", 0.5}}));
  EXPECT_EQ(recording.submitted[0].entrypointNumCpus, 1.5);
  plan.intents[0].target = "j-2";
  (*plan.intents[0].object)["entrypointResources"] = "[1, 2]";
  ExecResult refused = http.execute(job, plan);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("entrypointResources"), std::string::npos) << refused.error;
  EXPECT_EQ(recording.submitted.size(), 1u) << "nothing submitted with resources it cannot read";
}

// Events carry KubeRay's reason, action, note and reporting controller; a failed delete and a
// failed Service update are announced as KubeRay's FailedToDelete*/FailedToUpdateService (before,
// they posted nothing, and every Event said action Reconcile or Validate).
TEST_F(ExecutorTest, EventsAreKubeRaysReasonsActionsAndNotes) {
  Subject job = rayJobWithItsCluster();
  kube.injectFault({"remove", "Job", 1, 500, "InternalError", false});
  kube.injectFault({"update", "Service", 1, 500, "InternalError", false});
  Plan plan;
  plan.intents.push_back({Action::DeleteRayCluster, "j-abcde", nullptr});
  Plan failing;
  failing.intents.push_back({Action::DeleteSubmitterJob, "j", nullptr});
  Plan update;
  update.intents.push_back(
      {Action::UpdateHeadService, "j-head-svc",
       std::make_shared<json>(json{{"apiVersion", "v1"},
                                   {"kind", "Service"},
                                   {"metadata", {{"name", "j-head-svc"}, {"namespace", "default"}}}})});
  for (Plan* p : {&plan, &failing, &update}) executor.execute(job, *p);
  std::map<std::string, json> byReason;
  for (const auto& e : kube.list("Event", "default")) byReason[e["reason"]] = e;
  ASSERT_TRUE(byReason.count("DeletedRayCluster"));
  EXPECT_EQ(byReason["DeletedRayCluster"]["note"], "Deleted cluster default/j-abcde");
  EXPECT_EQ(byReason["DeletedRayCluster"]["action"], "Delete");
  EXPECT_EQ(byReason["DeletedRayCluster"]["reportingController"], "rayjob-controller");
  ASSERT_TRUE(byReason.count("FailedToDeleteRayJobSubmitter"));
  EXPECT_EQ(byReason["FailedToDeleteRayJobSubmitter"]["type"], "Warning");
  EXPECT_EQ(byReason["FailedToDeleteRayJobSubmitter"]["note"].get<std::string>().rfind(
                "Failed to delete submitter K8s Job default/j: ", 0),
            0u);
  ASSERT_TRUE(byReason.count("FailedToUpdateService"));
  EXPECT_EQ(byReason["FailedToUpdateService"]["action"], "Update");
}

TEST(EventNotesTest, CreateNotesAsEachKubeRayControllerWordsThem) {
  EXPECT_EQ(createNote({"RayJob", "Job", "ns", "j"}).message, "Created Kubernetes Job ns/j");
  EXPECT_EQ(createNote({"RayJob", "Job", "ns", "j"}).reason, "CreatedRayJobSubmitter");
  EXPECT_EQ(createNote({"RayJob", "Service", "ns", "j-head-svc"}).message,
            "Created the service ns/j-head-svc");
  EXPECT_EQ(createNote({"RayCluster", "Service", "ns", "c-head-svc"}).message,
            "Created service ns/c-head-svc");
  EXPECT_EQ(createNote({"RayCluster", "Pod", "ns", "c-head", true, "c"}).reason, "CreatedHeadPod");
  EventNote worker = createNote({"RayCluster", "Pod", "ns", "c-w-0", false, "c"}, "quota");
  EXPECT_EQ(worker.reason, "FailedToCreateWorkerPod");
  EXPECT_EQ(worker.message, "Failed to create worker Pod for the cluster ns/c, quota");
  EXPECT_EQ(worker.action, "Create");
  EXPECT_EQ(worker.type, "Warning");
}

}  // namespace
}  // namespace rayjournal::controller

namespace rayjournal::controller {
namespace {

// --events warnings: a delete as planned posts nothing, a failed one still posts its Warning;
// both outcomes stay in the journal.
TEST_F(ExecutorTest, WithWarningsOnlyANormalEventIsNotPostedAndAWarningIs) {
  executor.postNormalEvents(false);
  Subject job = rayJobWithItsCluster();
  kube.injectFault({"remove", "Job", 1, 500, "InternalError", false});
  Plan plan;
  plan.intents.push_back({Action::DeleteRayCluster, "j-abcde", nullptr});
  Plan failing;
  failing.intents.push_back({Action::DeleteSubmitterJob, "j", nullptr});
  executor.execute(job, plan);
  executor.execute(job, failing);
  std::vector<std::string> reasons;
  for (const auto& e : kube.list("Event", "default")) reasons.push_back(e["reason"]);
  EXPECT_EQ(reasons, std::vector<std::string>{"FailedToDeleteRayJobSubmitter"});
  EXPECT_FALSE(kube.get("RayCluster", "default", "j-abcde")) << "the delete itself ran";
}

}  // namespace
}  // namespace rayjournal::controller
