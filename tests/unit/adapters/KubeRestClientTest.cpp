// The REST client against a scripted local HTTP server: status codes become the right errors,
// reads are retried on 429 honouring Retry-After, writes are not retried on 5xx.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "adapters/kube/InformerCache.h"
#include "adapters/kube/KubeRestClient.h"
#include "adapters/ray/RayHttpClient.h"
#include "support/ClosedPort.h"

namespace rayjournal::kube {
namespace {

using testing::closedPort;

namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct Scripted {
  int status;
  std::string body;
  std::map<std::string, std::string> headers = {};
};

// Answers one connection per scripted response, in order, and records the requests.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::deque<Scripted> script)
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        script_(std::move(script)) {
    thread_ = std::thread([this] {
      while (!script_.empty()) {
        tcp::socket socket(ioc_);
        acceptor_.accept(socket);
        boost::beast::flat_buffer buffer;
        bhttp::request<bhttp::string_body> req;
        bhttp::read(socket, buffer, req);
        requests.push_back(std::string(req.method_string()) + " " + std::string(req.target()));
        bodies.push_back(req.body());
        Scripted s = script_.front();
        script_.pop_front();
        bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(s.status), 11};
        for (const auto& [k, v] : s.headers) res.set(k, v);
        res.body() = s.body;
        res.keep_alive(false);
        res.prepare_payload();
        bhttp::write(socket, res);
      }
    });
  }
  ~ScriptedServer() { thread_.join(); }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::vector<std::string> requests;
  std::vector<std::string> bodies;  // of each request, in order

 private:
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::deque<Scripted> script_;
  std::thread thread_;
};

// Answers every request by a rule until destroyed, counting lists and watches.
class RuleServer {
 public:
  explicit RuleServer(std::function<Scripted(bool watch)> rule)
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}), rule_(std::move(rule)) {
    thread_ = std::thread([this] {
      while (!stopping_) {
        tcp::socket socket(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec || stopping_) break;
        boost::beast::flat_buffer buffer;
        bhttp::request<bhttp::string_body> req;
        bhttp::read(socket, buffer, req, ec);
        if (ec) continue;
        bool watch = std::string(req.target()).find("watch=1") != std::string::npos;
        ++(watch ? watches : lists);
        Scripted s = rule_(watch);
        bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(s.status), 11};
        res.body() = s.body;
        res.keep_alive(false);
        res.prepare_payload();
        bhttp::write(socket, res, ec);
      }
    });
  }
  ~RuleServer() {
    stopping_ = true;
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::atomic<int> lists{0}, watches{0};

 private:
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::function<Scripted(bool)> rule_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

const char* kEmptyList = R"({"kind":"RayJobList","metadata":{"resourceVersion":"7"},"items":[]})";

// Runs a RayJob watch against `server` for `window`; the events it delivered.
int watchFor(const std::string& url, std::chrono::milliseconds window) {
  KubeConfig c;
  c.server = url;
  c.token = "t";
  KubeRestOptions o;
  o.timeout = std::chrono::milliseconds(5000);
  KubeRestClient client(c, o);
  std::atomic<int> events{0};
  client.watch("RayJob", [&](WatchEventType, const json&) { ++events; });
  std::this_thread::sleep_for(window);  // the window the request rate is measured over
  client.stopWatches();
  return events;
}

TEST(KubeRestClientTest, WatchAnswering410ForeverIsRelistedWithBackoff) {
  RuleServer server([](bool watch) {
    return watch ? Scripted{410, R"({"kind":"Status","code":410,"reason":"Expired"})"}
                 : Scripted{200, kEmptyList};
  });
  watchFor(server.url(), std::chrono::milliseconds(1500));
  EXPECT_GE(server.watches, 3) << "the watch gave up";
  EXPECT_LE(server.lists + server.watches, 20) << "relisted without backing off";
}

TEST(KubeRestClientTest, MalformedWatchLineDropsTheStreamAndRelistsWithBackoff) {
  RuleServer server([](bool watch) {
    return watch ? Scripted{200, "{\"type\":\"ADDED\",\"object\":null}\n"} : Scripted{200, kEmptyList};
  });
  EXPECT_EQ(watchFor(server.url(), std::chrono::milliseconds(1500)), 0);
  EXPECT_GE(server.lists, 2) << "the stream was not dropped and relisted";
  EXPECT_LE(server.lists + server.watches, 20) << "relisted without backing off";
}

// An object that a relist no longer lists was deleted while the watch was down: the client's
// Deleted event only names it, and the informer cache delivers its last state, with the owners
// and labels a handler maps it to its owner by.
TEST(KubeRestClientTest, ARelistReportsAVanishedObjectWithItsOwnersAndLabels) {
  std::atomic<int> listed{0};
  RuleServer server([&](bool watch) {
    if (watch) return Scripted{410, R"({"kind":"Status","code":410,"reason":"Expired"})"};
    if (listed++ > 0) return Scripted{200, kEmptyList};
    return Scripted{200, R"({"apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[
      {"metadata":{"name":"p","namespace":"n","uid":"u","resourceVersion":"4","labels":{"l":"v"},
       "ownerReferences":[{"kind":"RayCluster","name":"c","uid":"cu","controller":true}]},
       "spec":{"containers":[{"name":"ray-head"}]}}]})"};
  });
  KubeConfig c;
  c.server = server.url();
  c.token = "t";
  KubeRestClient client(c, KubeRestOptions{});
  InformerCache cache(client, {"Pod"});
  std::mutex mu;
  std::condition_variable deleted;
  std::optional<json> gone;
  cache.watch("Pod", [&](WatchEventType type, const json& o) {
    std::lock_guard lock(mu);
    if (type == WatchEventType::Deleted) gone = o;
    deleted.notify_all();
  });
  cache.start(std::chrono::seconds(10));
  std::unique_lock lock(mu);
  deleted.wait_for(lock, std::chrono::seconds(10), [&] { return gone.has_value(); });
  lock.unlock();
  client.stopWatches();
  ASSERT_TRUE(gone) << "no Deleted event after the relist";
  EXPECT_EQ((*gone)["metadata"]["ownerReferences"][0]["name"], "c");
  EXPECT_EQ((*gone)["metadata"]["labels"]["l"], "v");
  EXPECT_EQ((*gone)["metadata"]["uid"], "u");
  EXPECT_EQ((*gone)["kind"], "Pod");
}

// A packed kind's watch events are decoded straight into the cache's encoding: what the cache
// returns is the whole object less its managedFields, what its listeners hear is the head.
TEST(KubeRestClientTest, AWatchedPackedKindIsCachedWholeAndHeardAsItsHead) {
  RuleServer server([](bool watch) {
    if (!watch) return Scripted{200, kEmptyList};
    return Scripted{200, R"({"type":"ADDED","object":{"apiVersion":"ray.io/v1","kind":"RayJob",)"
                         R"("metadata":{"name":"a","namespace":"n","resourceVersion":"8",)"
                         R"("managedFields":[{"manager":"kubectl"}]},)"
                         R"("spec":{"entrypoint":"python x.py"},"status":{"jobStatus":"RUNNING"}}})"
                         "\n"};
  });
  KubeConfig c;
  c.server = server.url();
  c.token = "t";
  KubeRestClient client(c, KubeRestOptions{});
  InformerCache cache(client, {"RayJob"}, {{"RayJob", {nullptr, true}}});
  std::mutex mu;
  std::condition_variable heardCv;
  std::optional<json> heard;
  cache.watch("RayJob", [&](WatchEventType, const json& o) {
    std::lock_guard lock(mu);
    if (!heard) heard = o;
    heardCv.notify_all();
  });
  cache.start(std::chrono::seconds(10));
  std::unique_lock lock(mu);
  heardCv.wait_for(lock, std::chrono::seconds(10), [&] { return heard.has_value(); });
  lock.unlock();
  auto cached = cache.get("RayJob", "n", "a");
  client.stopWatches();
  ASSERT_TRUE(heard) << "no event";
  EXPECT_FALSE(heard->contains("spec")) << heard->dump();
  EXPECT_EQ((*heard)["status"]["jobStatus"], "RUNNING");
  EXPECT_EQ((*heard)["metadata"]["name"], "a");
  ASSERT_TRUE(cached);
  EXPECT_EQ((*cached)["spec"]["entrypoint"], "python x.py");
  EXPECT_EQ((*cached)["kind"], "RayJob");
  EXPECT_EQ((*cached)["metadata"]["resourceVersion"], "8");
  EXPECT_FALSE((*cached)["metadata"].contains("managedFields"));
}

KubeRestClient clientFor(const ScriptedServer& server) {
  KubeConfig c;
  c.server = server.url();
  c.token = "t";
  KubeRestOptions o;
  o.timeout = std::chrono::milliseconds(5000);
  return KubeRestClient(c, o);
}

const char* kRayJob = R"({"kind":"RayJob","metadata":{"name":"a","namespace":"n"}})";

TEST(KubeRestClientTest, ReadIsRetriedOn429AfterRetryAfter) {
  ScriptedServer server({{429, "{}", {{"Retry-After", "1"}}}, {200, kRayJob}});
  auto client = clientFor(server);
  auto began = std::chrono::steady_clock::now();
  auto job = client.get("RayJob", "n", "a");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  ASSERT_TRUE(job);
  EXPECT_EQ((*job)["metadata"]["name"], "a");
  EXPECT_GE(seconds, 0.9) << "Retry-After: 1 was honoured";
  EXPECT_EQ(server.requests.size(), 2u);
}

TEST(KubeRestClientTest, StatusCodesBecomeApiErrors) {
  ScriptedServer server(
      {{404, R"({"kind":"Status","reason":"NotFound","code":404})"},
       {409, R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})"},
       {409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists"})"},
       {500, R"({"kind":"Status","reason":"InternalError","message":"etcd"})"}});
  auto client = clientFor(server);
  EXPECT_FALSE(client.get("RayJob", "n", "a")) << "404 is absence";
  json doc = json::parse(kRayJob);
  doc["metadata"]["resourceVersion"] = "1";
  try {
    client.updateStatus("RayJob", doc);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.conflict());
    EXPECT_NE(std::string(e.what()).find("the object has been modified"), std::string::npos);
  }
  try {
    client.create("RayJob", doc);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.alreadyExists());
  }
  try {
    client.create("RayJob", doc);  // a write is not retried on 5xx: it may have been applied
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 500);
  }
  EXPECT_EQ(server.requests,
            (std::vector<std::string>{
                "GET /apis/ray.io/v1/namespaces/n/rayjobs/a",
                "PUT /apis/ray.io/v1/namespaces/n/rayjobs/a/status?fieldManager=rayjournal",
                "POST /apis/ray.io/v1/namespaces/n/rayjobs?fieldManager=rayjournal",
                "POST /apis/ray.io/v1/namespaces/n/rayjobs?fieldManager=rayjournal"}));
}

// The Ray Jobs API as the dashboard answers it: "already exists" arrives as a 500 with text.
TEST(RayHttpClientTest, AnswersOfTheJobsApi) {
  ScriptedServer server(
      {{200, R"({"status":"RUNNING","message":"Job is currently running.","start_time":5})"},
       {404, "Job x does not exist"},
       {500, "Traceback ... ValueError: Job with submission_id x already exists."},
       {200, R"({"stopped":true})"},
       {500, "Attempted to delete job 'x', but it is in a non-terminal state RUNNING."},
       {200, R"({"deleted":true})"},
       {200, R"({"version":"4","ray_version":"2.60.0"})"}});
  ray::RayHttpOptions o;
  o.dashboardOverride = server.url().substr(7);
  ray::RayHttpClient ray(o);
  auto info = ray.getJob("svc.ns.svc.cluster.local:8265", "x");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, "RUNNING");
  EXPECT_EQ(info->startTimeMs, 5u);
  EXPECT_FALSE(ray.getJob("svc.ns.svc.cluster.local:8265", "x"));
  ray::SubmitRequest r;
  r.submissionId = "x";
  r.entrypoint = "echo";
  EXPECT_EQ(ray.submit("d", r), ray::SubmitResult::AlreadyExists);
  EXPECT_TRUE(ray.stop("d", "x"));
  EXPECT_THROW(ray.deleteJob("d", "x"), ray::RayError);
  EXPECT_TRUE(ray.deleteJob("d", "x"));
  EXPECT_EQ(ray.version("d"), "2.60.0");
  EXPECT_EQ(server.requests,
            (std::vector<std::string>{"GET /api/jobs/x", "GET /api/jobs/x", "POST /api/jobs/",
                                      "POST /api/jobs/x/stop", "DELETE /api/jobs/x",
                                      "DELETE /api/jobs/x", "GET /api/version"}));
}

// A create whose answer goes to a cache that keeps it encoded: the answer is split, not parsed
// whole; an error is the ApiError create() gives, and an answer that is not JSON is refused.
TEST(KubeRestClientTest, ACreateAnswerComesBackAsItsHeadAndItsEncoding) {
  const std::string answer =
      R"({"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"c","namespace":"n",)"
      R"("uid":"u1","resourceVersion":"11","managedFields":[{"manager":"rayjournal"}]},)"
      R"("spec":{"rayVersion":"2.60.0"}})";
  ScriptedServer server(
      {{201, answer},
       {409, R"({"kind":"Status","reason":"AlreadyExists","message":"rayclusters \"c\" exists"})"},
       {201, "not json"}});
  auto client = clientFor(server);
  json cluster{{"metadata", {{"name", "c"}, {"namespace", "n"}}},
               {"spec", {{"rayVersion", "2.60.0"}}}};
  KubeClient::Encoded created = client.createEncoded("RayCluster", cluster);
  ASSERT_TRUE(created.object && created.packed);
  EXPECT_FALSE(created.object->contains("spec"));
  EXPECT_EQ((*created.object)["metadata"]["uid"], "u1");
  const json whole = json::from_cbor(*created.packed);
  EXPECT_EQ(whole["spec"]["rayVersion"], "2.60.0");
  EXPECT_FALSE(whole["metadata"].contains("managedFields"));
  try {
    client.createEncoded("RayCluster", cluster);
    FAIL() << "a 409 was taken for success";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.alreadyExists());
  }
  try {
    client.createEncoded("RayCluster", cluster);
    FAIL() << "an answer that is not JSON was taken";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("not JSON"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.requests.size(), 3u);
}

// A status write whose answer goes to a cache that keeps it encoded: the same PUT of the status
// subresource, the answer split; an error is the ApiError updateStatus() gives.
TEST(KubeRestClientTest, AStatusWriteAnswerComesBackAsItsHeadAndItsEncoding) {
  const std::string answer =
      R"({"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"j","namespace":"n",)"
      R"("uid":"u1","resourceVersion":"12","managedFields":[{"manager":"rayjournal"}]},)"
      R"("spec":{"entrypoint":"python x.py"},"status":{"jobDeploymentStatus":"Running"}})";
  ScriptedServer server(
      {{200, answer},
       {409, R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})"}});
  auto client = clientFor(server);
  json job{{"metadata", {{"name", "j"}, {"namespace", "n"}, {"resourceVersion", "11"}}},
           {"spec", {{"entrypoint", "python x.py"}}},
           {"status", {{"jobDeploymentStatus", "Running"}}}};
  KubeClient::Encoded written = client.updateStatusEncoded("RayJob", job);
  ASSERT_TRUE(written.object && written.packed);
  EXPECT_FALSE(written.object->contains("spec"));
  EXPECT_EQ((*written.object)["metadata"]["resourceVersion"], "12");
  EXPECT_EQ((*written.object)["status"]["jobDeploymentStatus"], "Running");
  const json whole = json::from_cbor(*written.packed);
  EXPECT_EQ(whole["spec"]["entrypoint"], "python x.py");
  EXPECT_FALSE(whole["metadata"].contains("managedFields"));
  try {
    client.updateStatusEncoded("RayJob", job);
    FAIL() << "a 409 was taken for success";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 409);
  }
  ASSERT_EQ(server.requests.size(), 2u);
  EXPECT_EQ(server.requests[0].rfind("PUT /apis/ray.io/v1/namespaces/n/rayjobs/j/status?", 0), 0u)
      << server.requests[0];
  EXPECT_EQ(server.bodies[0], job.dump()) << "the same bytes as updateStatus() sends";
}

// An Event's answer is never read: post() does not decode a successful answer (so it cannot
// fail on one), and an error answer is the same ApiError a create() gives.
TEST(KubeRestClientTest, APostDecodesOnlyAnErrorAnswer) {
  ScriptedServer server(
      {{201, "an answer nobody reads"},
       {422, R"({"kind":"Status","reason":"Invalid","message":"involvedObject: Required"})"}});
  auto client = clientFor(server);
  json event{{"metadata", {{"name", "e1"}, {"namespace", "n"}}}, {"reason", "Created"}};
  EXPECT_NO_THROW(client.post("Event", event));
  try {
    client.post("Event", event);
    FAIL() << "a 422 was taken for success";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 422);
    EXPECT_NE(std::string(e.what()).find("Invalid: involvedObject: Required"), std::string::npos)
        << e.what();
  }
  ASSERT_EQ(server.requests.size(), 2u);
  EXPECT_EQ(server.requests[0].rfind("POST /apis/events.k8s.io/v1/namespaces/n/events?", 0), 0u)
      << server.requests[0];
}

TEST(KubeRestClientTest, ResourcePaths) {
  EXPECT_EQ(resourcePath("RayJob", "ns1", "a", "status"),
            "/apis/ray.io/v1/namespaces/ns1/rayjobs/a/status");
  EXPECT_EQ(resourcePath("Pod", ""), "/api/v1/pods");
  EXPECT_EQ(resourcePath("Job", "x", "j"), "/apis/batch/v1/namespaces/x/jobs/j");
  EXPECT_EQ(resourcePath("Lease", "x", "l"), "/apis/coordination.k8s.io/v1/namespaces/x/leases/l");
  EXPECT_THROW(resourcePath("Gizmo", "x"), ApiError);
}

TEST(KubeRestClientTest, UnreachableServerIsAnErrorNamingTheServer) {
  KubeConfig c;
  c.server = "https://127.0.0.1:" + std::to_string(closedPort());
  c.tls.insecureSkipVerify = true;
  KubeRestOptions o;
  o.timeout = std::chrono::milliseconds(2000);
  KubeRestClient client(c, o);
  try {
    client.create("RayJob", {{"metadata", {{"name", "a"}, {"namespace", "n"}}}});
    FAIL() << "expected an error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 0);
    EXPECT_EQ(e.reason(), "Unreachable");
    EXPECT_NE(std::string(e.what()).find(c.server), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rayjournal::kube

namespace rayjournal::kube {
namespace {

// managedFields are dropped as objects arrive (a get, a list's items, a write's answer): the
// cache would otherwise hold the server's field-ownership bookkeeping of every object.
TEST(KubeRestClientTest, ManagedFieldsAreDroppedAsObjectsArrive) {
  const std::string withFields =
      R"({"kind":"RayJob","metadata":{"name":"a","namespace":"n","managedFields":[{"manager":"kubectl"}]}})";
  const std::string list =
      R"({"apiVersion":"ray.io/v1","metadata":{"resourceVersion":"5"},"items":[)" + withFields +
      "]}";
  ScriptedServer server({{200, withFields}, {200, list}, {201, withFields}});
  auto client = clientFor(server);
  auto got = client.get("RayJob", "n", "a");
  ASSERT_TRUE(got);
  EXPECT_FALSE((*got)["metadata"].contains("managedFields"));
  auto listed = client.list("RayJob", "n");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_FALSE(listed[0]["metadata"].contains("managedFields"));
  Snapshot created = client.create("RayJob", json::parse(kRayJob));
  EXPECT_FALSE((*created)["metadata"].contains("managedFields"));
  EXPECT_EQ((*created)["metadata"]["name"], "a");
}

// What the API server keeps of a RayCluster the operator created, whose status it wrote, and
// whose replicas the Ray autoscaler then patched (its user agent names it).
const char* kScaledClusterFields = R"([
  {"manager":"rayjournal","operation":"Update","time":"2026-12-03T10:00:00Z",
   "fieldsV1":{"f:metadata":{},"f:spec":{"f:workerGroupSpecs":{}}}},
  {"manager":"python-requests","operation":"Update","time":"2026-12-03T10:05:00Z",
   "fieldsV1":{"f:spec":{"f:workerGroupSpecs":{}}}},
  {"manager":"rayjournal","operation":"Update","subresource":"status","time":"2026-12-03T10:06:00Z",
   "fieldsV1":{"f:status":{}}},
  {"manager":"kubectl-label","operation":"Update","time":"2026-12-03T10:07:00Z",
   "fieldsV1":{"f:metadata":{"f:labels":{}}}}
])";

TEST(KubeRestClientTest, TheSpecManagerIsTheNewestWriterOfASpecField) {
  EXPECT_EQ(newestSpecManager(json::parse(kScaledClusterFields)), "python-requests")
      << "status and metadata-only writes are not spec changes";
  EXPECT_EQ(newestSpecManager(json::array()), "");
  EXPECT_EQ(newestSpecManager(json::parse(R"([{"manager":7,"fieldsV1":{"f:spec":{}}}, "x"])")), "")
      << "malformed entries are skipped";
  EXPECT_EQ(newestSpecManager(json()), "");
}

TEST(KubeRestClientTest, TheSpecManagerIsReadLiveWithTheManagedFieldsTheCacheDrops) {
  const std::string cluster = R"({"kind":"RayCluster","metadata":{"name":"rc","namespace":"n",
      "managedFields":)" + std::string(kScaledClusterFields) + "}}";
  ScriptedServer server({{200, cluster}, {404, R"({"reason":"NotFound"})"}});
  auto client = clientFor(server);
  EXPECT_EQ(client.specManager("RayCluster", "n", "rc"), "python-requests");
  EXPECT_EQ(client.specManager("RayCluster", "n", "gone"), "") << "absent: unknown, no error";
}

}  // namespace
}  // namespace rayjournal::kube
