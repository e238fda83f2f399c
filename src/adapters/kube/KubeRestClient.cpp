#include "adapters/kube/KubeRestClient.h"

#include <spdlog/spdlog.h>

#include "model/ApiJson.h"
#include "model/JsonAccess.h"

#include <fstream>
#include <sstream>

namespace rayjournal::kube {
namespace {

// The wait before the (n+1)-th retry of a watch: 200 ms doubling, at most 5 s.
std::chrono::milliseconds watchBackoff(int n) {
  return std::chrono::milliseconds(std::min(5000, 200 << std::min(std::max(n, 0), 5)));
}

struct Resource {
  const char* prefix;  // "/api/v1" or "/apis/GROUP/VERSION"
  const char* plural;
};

const std::map<std::string, Resource>& resources() {
  static const std::map<std::string, Resource> table{
      {"RayJob", {"/apis/ray.io/v1", "rayjobs"}},
      {"RayCluster", {"/apis/ray.io/v1", "rayclusters"}},
      {"Job", {"/apis/batch/v1", "jobs"}},
      {"Pod", {"/api/v1", "pods"}},
      {"Service", {"/api/v1", "services"}},
      {"Event", {"/apis/events.k8s.io/v1", "events"}},
      {"Lease", {"/apis/coordination.k8s.io/v1", "leases"}},
      {"ConfigMap", {"/api/v1", "configmaps"}},
      {"Secret", {"/api/v1", "secrets"}},
      {"ServiceAccount", {"/api/v1", "serviceaccounts"}},
      {"Role", {"/apis/rbac.authorization.k8s.io/v1", "roles"}},
      {"RoleBinding", {"/apis/rbac.authorization.k8s.io/v1", "rolebindings"}},
      {"PersistentVolumeClaim", {"/api/v1", "persistentvolumeclaims"}},
      {"Namespace", {"/api/v1", "namespaces"}},
      {"PodGroup", {"/apis/scheduling.volcano.sh/v1beta1", "podgroups"}},
  };
  return table;
}

std::string percentEncode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '/') {
      out += char(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

std::string selectorOf(const std::map<std::string, std::string>& labels) {
  std::string s;
  for (const auto& [k, v] : labels) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

const char* propagationName(Propagation p) {
  switch (p) {
    case Propagation::Foreground:
      return "Foreground";
    case Propagation::Orphan:
      return "Orphan";
    default:
      return "Background";
  }
}

// The API server's managedFields (field ownership for server-side apply, often larger than the
// rest of the metadata) are read by nothing here: they are dropped as each object arrives, so
// neither the cache nor the watch's tombstones hold them. A PUT without them leaves the server's
// as they are (a client that does not know the field cannot clear it). model::parseApiJson
// leaves them out as it builds the document.

std::string objectKey(const json& o) {
  return o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "");
}

}  // namespace

std::string resourcePath(const std::string& kind, const std::string& ns, const std::string& name,
                         const std::string& subresource) {
  auto it = resources().find(kind);
  if (it == resources().end()) throw ApiError(400, "BadRequest", "unknown kind " + kind);
  std::string path = it->second.prefix;
  if (!ns.empty()) path += "/namespaces/" + ns;
  path += std::string("/") + it->second.plural;
  if (!name.empty()) path += "/" + name;
  if (!subresource.empty()) path += "/" + subresource;
  return path;
}

KubeRestClient::KubeRestClient(KubeConfig config, KubeRestOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      http_(config_.server, config_.tls, options_.timeout),
      watchHttp_(config_.server, config_.tls, options_.timeout),
      limiter_(options_.qps, options_.burst),
      token_(config_.token) {}

KubeRestClient::~KubeRestClient() {
  stopWatches();
}

http::Headers KubeRestClient::authHeaders() {
  std::lock_guard lock(tokenMu_);
  auto now = std::chrono::steady_clock::now();
  // Projected service account tokens rotate; re-read the file every minute.
  if (!config_.tokenFile.empty() && now - tokenReadAt_ > std::chrono::seconds(60)) {
    std::ifstream in(config_.tokenFile);
    std::stringstream s;
    s << in.rdbuf();
    std::string t = s.str();
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (!t.empty()) token_ = t;
    tokenReadAt_ = now;
  }
  http::Headers h{{"Accept", "application/json"}};
  if (!token_.empty()) h["Authorization"] = "Bearer " + token_;
  return h;
}

http::HttpResponse KubeRestClient::call(const std::string& method, const std::string& path,
                                        const std::string& body, const std::string& contentType) {
  const bool read = method == "GET";
  for (int attempt = 0;; ++attempt) {
    limiter_.acquire(path);
    http::Headers headers = authHeaders();
    if (!body.empty()) headers["Content-Type"] = contentType;
    http::HttpResponse res;
    try {
      res = http_.request(method, path, body, headers);
    } catch (const http::HttpError& e) {
      if (read && attempt < 2 && !sleepUnlessStopped(std::chrono::milliseconds(200 << attempt)))
        continue;
      throw ApiError(0, "Unreachable", e.what());
    }
    bool retry = res.status == 429 || (read && res.status >= 500);
    if (retry && attempt < 4) {
      int64_t waitMs = 100 << attempt;
      if (auto it = res.headers.find("retry-after"); it != res.headers.end()) {
        waitMs = std::max<int64_t>(waitMs, std::atoll(it->second.c_str()) * 1000);
      }
      spdlog::debug("{} {}: {} from the API server; retrying in {} ms", method, path, res.status,
                    waitMs);
      if (!sleepUnlessStopped(std::chrono::milliseconds(std::min<int64_t>(waitMs, 10000))))
        continue;
    }
    return res;
  }
}

json KubeRestClient::callJson(const std::string& method, const std::string& path,
                              const std::string& body, const std::string& contentType) {
  return answerOf(method, path, call(method, path, body, contentType));
}

json KubeRestClient::answerOf(const std::string& method, const std::string& path,
                              const http::HttpResponse& res) {
  // One object or a list: either way without the managedFields of the object or its items.
  json doc = model::parseApiJson(res.body, model::ApiShape::List);
  if (res.status >= 200 && res.status < 300) {
    if (doc.is_discarded())
      throw ApiError(res.status, "InvalidResponse",
                     method + " " + path + ": the API server's answer is not JSON");
    return doc;
  }
  throwApiError(method, path, res, doc);
}

void KubeRestClient::throwApiError(const std::string& method, const std::string& path,
                                   const http::HttpResponse& res, const json& doc) {
  std::string reason = doc.is_object() ? doc.value("reason", "") : "";
  std::string message = doc.is_object() ? doc.value("message", "") : res.body.substr(0, 200);
  if (reason.empty()) reason = "HTTP" + std::to_string(res.status);
  throw ApiError(res.status, reason,
                 method + " " + path + " on " + config_.server + ": " + std::to_string(res.status) +
                     " " + reason + ": " + message);
}

std::optional<json> KubeRestClient::get(const std::string& kind, const std::string& ns,
                                        const std::string& name) {
  try {
    return callJson("GET", resourcePath(kind, ns, name));
  } catch (const ApiError& e) {
    if (e.notFound()) return std::nullopt;
    throw;
  }
}

std::string KubeRestClient::specManager(const std::string& kind, const std::string& ns,
                                       const std::string& name) {
  // call(), not callJson(): the answer keeps its managedFields.
  http::HttpResponse res = call("GET", resourcePath(kind, ns, name));
  if (res.status < 200 || res.status >= 300) return "";
  json doc = json::parse(res.body, nullptr, false);
  auto meta = doc.is_object() ? doc.find("metadata") : doc.end();
  if (meta == doc.end() || !meta->is_object() || !meta->contains("managedFields")) return "";
  return newestSpecManager((*meta)["managedFields"]);
}

std::vector<json> KubeRestClient::list(const std::string& kind, const std::string& ns,
                                       const std::map<std::string, std::string>& labels) {
  std::string path = resourcePath(kind, ns);
  if (!labels.empty()) path += "?labelSelector=" + percentEncode(selectorOf(labels));
  json doc = callJson("GET", path);
  std::vector<json> items;
  for (auto& item : doc["items"]) {
    // Items of a list carry no kind/apiVersion; add them so they look like a GET.
    item["kind"] = kind;
    if (doc.contains("apiVersion")) item["apiVersion"] = doc["apiVersion"];
    items.push_back(std::move(item));
  }
  return items;
}

Snapshot KubeRestClient::create(const std::string& kind, json object) {
  std::string ns = object["metadata"].value("namespace", config_.defaultNamespace);
  return snapshotOf(callJson(
      "POST", resourcePath(kind, ns) + "?fieldManager=" + percentEncode(options_.fieldManager),
      object.dump()));
}

KubeClient::Encoded KubeRestClient::createEncoded(const std::string& kind, json object) {
  std::string ns = object["metadata"].value("namespace", config_.defaultNamespace);
  const std::string path =
      resourcePath(kind, ns) + "?fieldManager=" + percentEncode(options_.fieldManager);
  return encodedAnswerOf("POST", path, kind, call("POST", path, object.dump()));
}

KubeClient::Encoded KubeRestClient::encodedAnswerOf(const std::string& method,
                                                    const std::string& path,
                                                    const std::string& kind,
                                                    const http::HttpResponse& res) {
  model::SplitObject split;
  if (res.status >= 200 && res.status < 300 && model::splitApiObject(res.body, kind, split))
    return {std::make_shared<const json>(std::move(split.head)),
            std::make_shared<const std::vector<uint8_t>>(std::move(split.encoded))};
  return {snapshotOf(answerOf(method, path, res)), nullptr};
}

void KubeRestClient::post(const std::string& kind, json object) {
  std::string ns = object["metadata"].value("namespace", config_.defaultNamespace);
  const std::string path =
      resourcePath(kind, ns) + "?fieldManager=" + percentEncode(options_.fieldManager);
  http::HttpResponse res = call("POST", path, object.dump());
  if (res.status >= 200 && res.status < 300) return;
  throwApiError("POST", path, res, model::parseApiJson(res.body, model::ApiShape::Object));
}

std::vector<std::optional<ApiError>> KubeRestClient::postAll(const std::string& kind,
                                                             std::vector<json> objects) {
  std::vector<http::HttpRequest> requests;
  http::Headers headers = authHeaders();
  headers["Content-Type"] = "application/json";
  for (json& object : objects) {
    std::string ns = object["metadata"].value("namespace", config_.defaultNamespace);
    std::string path = resourcePath(kind, ns) + "?fieldManager=" + percentEncode(options_.fieldManager);
    limiter_.acquire(path);
    requests.push_back({"POST", std::move(path), object.dump(), headers});
  }
  std::string broken;
  std::vector<http::HttpResponse> answers = http_.pipeline(requests, &broken);
  std::vector<std::optional<ApiError>> errors(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string& path = requests[i].target;
    if (i >= answers.size()) {
      errors[i] = ApiError(0, "Unreachable", "POST " + path + ": " + broken);
      continue;
    }
    const http::HttpResponse& res = answers[i];
    if (res.status >= 200 && res.status < 300) continue;
    try {
      if (res.status == 429) post(kind, std::move(objects[i]));
      else throwApiError("POST", path, res, model::parseApiJson(res.body, model::ApiShape::Object));
    } catch (const ApiError& e) {
      errors[i] = e;
    }
  }
  return errors;
}

Snapshot KubeRestClient::update(const std::string& kind, json object) {
  const auto& m = object["metadata"];
  return snapshotOf(callJson(
      "PUT",
      resourcePath(kind, m.value("namespace", config_.defaultNamespace), m.value("name", "")) +
          "?fieldManager=" + percentEncode(options_.fieldManager),
      object.dump()));
}

Snapshot KubeRestClient::updateStatus(const std::string& kind, json object) {
  return snapshotOf(callJson("PUT", statusPath(kind, object), object.dump()));
}

std::string KubeRestClient::statusPath(const std::string& kind, const json& object) const {
  const json& m = model::objectAt(object, "metadata");
  std::string ns = model::stringAt(m, "namespace");
  return resourcePath(kind, ns.empty() ? config_.defaultNamespace : ns,
                      model::stringAt(m, "name"), "status") +
         "?fieldManager=" + percentEncode(options_.fieldManager);
}

KubeClient::Encoded KubeRestClient::updateStatusEncoded(const std::string& kind,
                                                        const json& object) {
  const std::string path = statusPath(kind, object);
  return encodedAnswerOf("PUT", path, kind, call("PUT", path, object.dump()));
}

void KubeRestClient::remove(const std::string& kind, const std::string& ns, const std::string& name,
                            Propagation propagation) {
  json options{{"kind", "DeleteOptions"},
               {"apiVersion", "v1"},
               {"propagationPolicy", propagationName(propagation)}};
  callJson("DELETE", resourcePath(kind, ns, name), options.dump());
}

json KubeRestClient::mergePatch(const std::string& kind, const std::string& ns,
                                const std::string& name, const json& patch,
                                const std::string& subresource) {
  return callJson("PATCH",
                  resourcePath(kind, ns, name, subresource) +
                      "?fieldManager=" + percentEncode(options_.fieldManager),
                  patch.dump(), "application/merge-patch+json");
}

http::HttpResponse KubeRestClient::raw(const std::string& method, const std::string& path,
                                       const std::string& body, const http::Headers& headers) {
  limiter_.acquire(path);
  http::Headers all = authHeaders();
  for (const auto& [k, v] : headers) all[k] = v;
  return http_.request(method, path, body, all);
}

std::string KubeRestClient::serverVersion() {
  return callJson("GET", "/version").value("gitVersion", "unknown");
}

bool KubeRestClient::sleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock lock(stopMu_);
  return stopCv_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void KubeRestClient::watch(const std::string& kind, WatchCallback callback) {
  watchSnapshots(kind, [callback = std::move(callback)](WatchEventType type, const Snapshot& o) {
    callback(type, *o);
  });
}

void KubeRestClient::watchSnapshots(const std::string& kind, SnapshotCallback callback) {
  startWatches(
      kind,
      [callback = std::move(callback)](WatchEventType type, const Snapshot& o, const Packed&) {
        callback(type, o);
      },
      false);
}

void KubeRestClient::watchPacked(const std::string& kind, PackedCallback callback) {
  startWatches(kind, std::move(callback), true);
}

void KubeRestClient::startWatches(const std::string& kind, PackedCallback callback, bool split) {
  std::vector<std::string> namespaces = options_.watchNamespaces;
  if (namespaces.empty()) namespaces.push_back("");
  for (const std::string& ns : namespaces) {
    ++unsyncedWatches_;
    watchers_.emplace_back(
        [this, kind, ns, callback, split] { watchLoop(kind, ns, callback, split); });
  }
}

namespace {

// The Deleted event of an object a relist no longer lists: its name and last resourceVersion.
const std::string& versionOf(const json& o) {
  return model::stringAt(model::objectAt(o, "metadata"), "resourceVersion");
}

json finalStateUnknown(const std::string& kind, const std::string& apiVersion,
                       const std::string& key, const std::string& resourceVersion) {
  const size_t slash = key.find('/');
  return {{"kind", kind},
          {"apiVersion", apiVersion},
          {"metadata",
           {{"namespace", key.substr(0, slash)},
            {"name", key.substr(slash + 1)},
            {"resourceVersion", resourceVersion}}}};
}


}  // namespace

std::string KubeRestClient::relist(const std::string& kind, const std::string& ns,
                                   KnownObjects& known, const PackedCallback& callback) {
  std::string path = resourcePath(kind, ns);
  if (auto it = options_.watchSelectors.find(kind); it != options_.watchSelectors.end())
    path += "?labelSelector=" + percentEncode(it->second);
  json doc = callJson("GET", path);
  KnownObjects now;
  for (auto& item : doc["items"]) {
    item["kind"] = kind;
    item["apiVersion"] = doc.value("apiVersion", "");
    now[objectKey(item)] = versionOf(item);
  }
  for (const auto& [key, resourceVersion] : known) {
    if (!now.count(key))
      callback(WatchEventType::Deleted,
               std::make_shared<const json>(
                   finalStateUnknown(kind, doc.value("apiVersion", ""), key, resourceVersion)),
               nullptr);
  }
  for (auto& item : doc["items"]) {
    auto it = known.find(objectKey(item));
    if (it == known.end()) {
      callback(WatchEventType::Added, std::make_shared<const json>(std::move(item)), nullptr);
    } else if (it->second != versionOf(item)) {
      callback(WatchEventType::Modified, std::make_shared<const json>(std::move(item)), nullptr);
    }
  }
  known = std::move(now);
  return doc["metadata"].value("resourceVersion", "");
}

void KubeRestClient::delivered(WatchEventType type, const std::string& key,
                               const std::string& resourceVersion, WatchState& w) {
  if (type == WatchEventType::Deleted)
    w.known.erase(key);
  else
    w.known.insert_or_assign(key, resourceVersion);
  w.failures = 0;
  w.delivered = true;
}

bool KubeRestClient::onSplitLine(const std::string& kind, const std::string& line, WatchState& w,
                                 const PackedCallback& callback) {
  model::SplitWatchEvent event;
  if (!model::splitWatchEvent(line, kind, event)) return false;
  const std::string rv = versionOf(event.object.head);
  if (!rv.empty()) w.resourceVersion = rv;
  const std::string key = objectKey(event.object.head);
  WatchEventType type = event.type == "DELETED" ? WatchEventType::Deleted
                        : w.known.count(key)    ? WatchEventType::Modified
                                                : WatchEventType::Added;
  delivered(type, key, rv, w);
  callback(type, std::make_shared<const json>(std::move(event.object.head)),
           std::make_shared<const std::vector<uint8_t>>(std::move(event.object.encoded)));
  return true;
}

bool KubeRestClient::onWatchLine(const std::string& kind, const std::string& line, WatchState& w,
                                 const PackedCallback& callback) {
  if (stopping_) return false;
  if (w.split && onSplitLine(kind, line, w, callback)) return true;
  json event = model::parseApiJson(line, model::ApiShape::WatchEvent);
  std::string type = event.is_object() && event["type"].is_string() ? event["type"] : "";
  bool known = type == "ADDED" || type == "MODIFIED" || type == "DELETED" ||
               type == "BOOKMARK" || type == "ERROR";
  if (!known || !event["object"].is_object() ||
      (type != "ERROR" && !event["object"]["metadata"].is_object())) {
    w.malformed = line.substr(0, 200);
    return false;
  }
  json& o = event["object"];
  if (type == "ERROR") {
    w.gone = o.value("code", 0) == 410;
    if (!w.gone) spdlog::warn("watch {}: {}", kind, o.value("message", line));
    return false;
  }
  std::string rv = o["metadata"].value("resourceVersion", "");
  if (!rv.empty()) w.resourceVersion = rv;
  if (type == "BOOKMARK") return true;
  o["kind"] = kind;
  const std::string key = objectKey(o);
  WatchEventType change = type == "DELETED" ? WatchEventType::Deleted
                          : w.known.count(key) ? WatchEventType::Modified
                                               : WatchEventType::Added;
  delivered(change, key, versionOf(o), w);
  callback(change, std::make_shared<const json>(std::move(o)), nullptr);
  return true;
}

void KubeRestClient::streamOnce(const std::string& kind, const std::string& selector,
                                WatchState& w, const PackedCallback& callback) {
  std::string target = resourcePath(kind, w.ns) +
                       "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                       std::to_string(options_.watchTimeoutSeconds) +
                       "&resourceVersion=" + w.resourceVersion + selector;
  w.gone = false;
  w.delivered = false;
  w.malformed.clear();
  std::string errorBody;
  limiter_.acquire(target);
  int status = watchHttp_.stream(
      target, authHeaders(),
      [&](const std::string& line) { return onWatchLine(kind, line, w, callback); },
      std::chrono::seconds(options_.watchTimeoutSeconds + 30), &errorBody);
  if (status == 410) w.gone = true;
  if (!w.malformed.empty()) {
    w.resourceVersion.clear();  // what was skipped is unknown: relist
    throw ApiError(502, "MalformedWatch",
                   "watch " + kind + " on " + config_.server +
                       " sent a line that is not a watch event (dropped the stream): " +
                       w.malformed);
  }
  if (w.gone) {
    spdlog::info("watch {}: resourceVersion {} is too old (410 Gone); relisting", kind,
                 w.resourceVersion);
    w.resourceVersion.clear();
  } else if (status != 200) {
    throw ApiError(status, "WatchFailed",
                   "watch " + kind + " on " + config_.server + ": " + std::to_string(status) +
                       " " + errorBody.substr(0, 200));
  }
}

void KubeRestClient::watchLoop(std::string kind, std::string ns, PackedCallback callback,
                               bool split) {
  WatchState w;
  w.ns = std::move(ns);
  w.split = split;
  bool synced = false;
  std::string selector;
  if (auto it = options_.watchSelectors.find(kind); it != options_.watchSelectors.end())
    selector = "&labelSelector=" + percentEncode(it->second);
  while (!stopping_) {
    try {
      if (w.resourceVersion.empty()) w.resourceVersion = relist(kind, w.ns, w.known, callback);
      if (!synced) {
        synced = true;
        --unsyncedWatches_;
      }
      auto began = std::chrono::steady_clock::now();
      streamOnce(kind, selector, w, callback);
      if (!pauseAfterFruitlessStream(kind, w, std::chrono::steady_clock::now() - began)) break;
    } catch (const std::exception& e) {
      if (stopping_) break;
      auto backoff = watchBackoff(w.failures);
      ++w.failures;
      spdlog::warn("watch {}: {}; retrying in {} ms", kind, e.what(), backoff.count());
      if (sleepUnlessStopped(backoff)) break;
      // After a failure the resourceVersion may be unusable; the next stream will say 410.
    }
  }
}

bool KubeRestClient::pauseAfterFruitlessStream(const std::string& kind, WatchState& w,
                                               std::chrono::steady_clock::duration lasted) {
  if (w.delivered || (!w.gone && lasted >= std::chrono::seconds(1))) {
    w.fruitless = 0;
    return true;
  }
  if (++w.fruitless < 2) return true;  // one 410 is routine: relist at once
  auto pause = watchBackoff(w.fruitless - 2);
  spdlog::warn("watch {}: {} streams in a row ended without an event{}; waiting {} ms", kind,
               w.fruitless, w.gone ? " (410 Gone right after a relist)" : "", pause.count());
  return !sleepUnlessStopped(pause);
}

void KubeRestClient::stopWatches() {
  {
    std::lock_guard lock(stopMu_);
    if (stopping_.exchange(true) && watchers_.empty()) return;
  }
  stopCv_.notify_all();
  watchHttp_.cancelStreams();
  for (auto& t : watchers_) {
    if (t.joinable()) t.join();
  }
  watchers_.clear();
}

}  // namespace rayjournal::kube
