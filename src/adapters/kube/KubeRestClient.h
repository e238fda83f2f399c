// The KubeClient over the real Kubernetes REST API (HTTPS, kubeconfig or in-cluster auth).
// Guarantees: API errors become ApiError with the server's code and reason (a connection
// failure is code 0, reason "Unreachable", naming the server); GETs and LISTs are retried on
// 429/5xx and 429 on writes, honouring Retry-After; every request passes the client-side rate
// limit of its resource (one token bucket per resource kind, as client-go's per-kind REST clients).
// watch() runs an informer-style loop per kind in its own thread: list, then watch from the list's
// resourceVersion with bookmarks, resume from the last resourceVersion when the stream ends, relist
// on 410 Gone (synthesising Deleted for objects that vanished meanwhile), reconnect with backoff.
// Thread-safe. Blocking: calls until the server answers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <thread>
#include <vector>

#include "adapters/http/HttpClient.h"
#include "adapters/kube/KubeClient.h"
#include "adapters/kube/KubeConfig.h"
#include "adapters/kube/RateLimiter.h"

namespace rayjournal::kube {

struct KubeRestOptions {
  double qps = 100;  // KubeRay's defaults, per resource kind (RateLimiter.h)
  int burst = 200;
  std::chrono::milliseconds timeout{30000};
  int watchTimeoutSeconds = 300;                      // server-side end of each watch request
  std::map<std::string, std::string> watchSelectors;  // kind -> label selector
  // KubeRay's --watch-namespace: every kind is listed and watched in these namespaces only,
  // one watch each; empty: all namespaces, one watch per kind.
  std::vector<std::string> watchNamespaces;
  std::string fieldManager = "rayjournal";
};

// The REST path of a kind ("RayJob", "Pod", ...); ns empty lists across namespaces.
std::string resourcePath(const std::string& kind, const std::string& ns,
                         const std::string& name = "", const std::string& subresource = "");

class KubeRestClient : public KubeClient {
 public:
  KubeRestClient(KubeConfig config, KubeRestOptions options);
  ~KubeRestClient() override;

  std::optional<json> get(const std::string& kind, const std::string& ns,
                          const std::string& name) override;
  std::vector<json> list(const std::string& kind, const std::string& ns,
                         const std::map<std::string, std::string>& labels = {}) override;
  Snapshot create(const std::string& kind, json object) override;
  // The answer's body is decoded only when it is an error.
  void post(const std::string& kind, json object) override;
  // Pipelined on one connection (HttpClient::pipeline); an answer 429 (the server's flow
  // control) is posted again alone, with post()'s backoff.
  std::vector<std::optional<ApiError>> postAll(const std::string& kind,
                                               std::vector<json> objects) override;
  // The answer split as a watch event is (model::splitApiObject): its head and its encoding.
  Encoded createEncoded(const std::string& kind, json object) override;
  // The answer split on the way in: its head and its CBOR, no document of its spec built.
  Encoded updateStatusEncoded(const std::string& kind, const json& object) override;
  Snapshot update(const std::string& kind, json object) override;
  Snapshot updateStatus(const std::string& kind, json object) override;
  void remove(const std::string& kind, const std::string& ns, const std::string& name,
              Propagation propagation = Propagation::Background) override;
  void watch(const std::string& kind, WatchCallback callback) override;
  // Each decoded object is moved into its snapshot: no copy per event.
  void watchSnapshots(const std::string& kind, SnapshotCallback callback) override;
  // Each watch event's object is decoded once, straight into its encoding (model::
  // splitWatchEvent), and the snapshot is only its head: no document of its spec is built. The
  // objects of a list, and an event simdjson refuses, are parsed whole and their encoding is null.
  void watchPacked(const std::string& kind, PackedCallback callback) override;
  std::string specManager(const std::string& kind, const std::string& ns,
                          const std::string& name) override;

  // JSON merge patch (RFC 7386) of the object or its subresource.
  json mergePatch(const std::string& kind, const std::string& ns, const std::string& name,
                  const json& patch, const std::string& subresource = "");
  // Any request to the API server with this client's auth and rate limit (the service proxy).
  http::HttpResponse raw(const std::string& method, const std::string& path,
                         const std::string& body, const http::Headers& headers);
  // GET /version: the server's gitVersion; throws ApiError naming the server when unreachable.
  std::string serverVersion();
  // Every watch() so far has delivered its first complete list.
  bool synced() const { return unsyncedWatches_ == 0; }
  bool watchesSynced() const override { return synced(); }
  // Ends every watch loop (no callback runs after this returns).
  void stopWatches();
  const KubeConfig& config() const { return config_; }

 private:
  http::HttpResponse call(const std::string& method, const std::string& path,
                          const std::string& body = "",
                          const std::string& contentType = "application/json");
  json callJson(const std::string& method, const std::string& path, const std::string& body = "",
                const std::string& contentType = "application/json");
  // The document of an answer (less managedFields); throws ApiError for one that is not 2xx.
  json answerOf(const std::string& method, const std::string& path, const http::HttpResponse& res);
  // A write's answer split into its head and CBOR; parsed whole when it cannot be (an error
  // answer then throws as answerOf()).
  Encoded encodedAnswerOf(const std::string& method, const std::string& path,
                          const std::string& kind, const http::HttpResponse& res);
  // The status subresource's path for object (its metadata's namespace and name).
  std::string statusPath(const std::string& kind, const json& object) const;
  // The ApiError for an answer that is not 2xx, with the Status object's reason and message.
  [[noreturn]] void throwApiError(const std::string& method, const std::string& path,
                                  const http::HttpResponse& res, const json& doc);
  http::Headers authHeaders();
  // split: the events' objects as heads with their encoding (watchPacked), or whole.
  void startWatches(const std::string& kind, PackedCallback callback, bool split);
  void watchLoop(std::string kind, std::string ns, PackedCallback callback, bool split);
  // What a watch remembers of each object it delivered: its resourceVersion, which a relist
  // compares. An object a relist no longer lists gets a Deleted event that only names it
  // (isFinalStateUnknown); the informer cache in front delivers its last state.
  using KnownObjects = std::map<std::string, std::string>;  // "ns/name" -> resourceVersion
  // What one watch of a kind carries from stream to stream.
  struct WatchState {
    std::string ns;  // "" for all namespaces
    KnownObjects known;
    std::string resourceVersion;
    int failures = 0;
    bool gone = false;        // the stream said 410: relist
    bool delivered = false;   // the current stream delivered an event
    int fruitless = 0;        // streams in a row that ended quickly or 410 without an event
    std::string malformed;    // a line that is not a watch event: drop the stream, relist
    bool split = false;       // see startWatches
  };
  // Pauses before the next stream when streams keep ending without an event (a server that
  // answers 410 forever, or closes each watch at once); false when stopping.
  bool pauseAfterFruitlessStream(const std::string& kind, WatchState& w,
                                 std::chrono::steady_clock::duration lasted);
  // One line of a watch stream; false ends the stream.
  bool onWatchLine(const std::string& kind, const std::string& line, WatchState& w,
                   const PackedCallback& callback);
  // An event of w.split's form; false when the line must take onWatchLine's whole path.
  bool onSplitLine(const std::string& kind, const std::string& line, WatchState& w,
                   const PackedCallback& callback);
  void delivered(WatchEventType type, const std::string& key, const std::string& resourceVersion,
                 WatchState& w);
  // One watch request from w.resourceVersion; throws ApiError on a failed stream.
  void streamOnce(const std::string& kind, const std::string& selector, WatchState& w,
                  const PackedCallback& callback);
  // Lists and reconciles the known set; returns the list's resourceVersion.
  std::string relist(const std::string& kind, const std::string& ns, KnownObjects& known,
                     const PackedCallback& callback);
  bool sleepUnlessStopped(std::chrono::milliseconds d);

  KubeConfig config_;
  KubeRestOptions options_;
  http::HttpClient http_;
  http::HttpClient watchHttp_;  // separate pool: long-lived streams
  ResourceRateLimiters limiter_;  // one bucket per resource, as client-go under controller-runtime
  std::mutex tokenMu_;
  std::string token_;
  std::chrono::steady_clock::time_point tokenReadAt_{};
  std::atomic<bool> stopping_{false};
  std::mutex stopMu_;
  std::condition_variable stopCv_;
  std::vector<std::thread> watchers_;
  std::atomic<int> unsyncedWatches_{0};
};

}  // namespace rayjournal::kube
