// The Kubernetes API as the controller needs it. Implemented by the simulated cluster
// (sim/SimKube) and the real REST client. Objects are JSON documents as the API serves them.
// Thread-safe; calls block until the server answers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rayjournal::kube {

using nlohmann::json;

// An API error with its HTTP code and Kubernetes reason (AlreadyExists, Conflict, NotFound, ...).
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, const std::string& message)
      : std::runtime_error(message), code_(code), reason_(std::move(reason)) {}
  int code() const { return code_; }
  const std::string& reason() const { return reason_; }
  bool notFound() const { return code_ == 404; }
  bool alreadyExists() const { return code_ == 409 && reason_ == "AlreadyExists"; }
  bool conflict() const { return code_ == 409 && reason_ == "Conflict"; }

 private:
  int code_;
  std::string reason_;
};

enum class WatchEventType { Added, Modified, Deleted };
// A Deleted event's object that names the object but not its last state (see watch()).
// The uids its ownerReferences name (references without a string uid are skipped): the owner
// index's notion of ownership.
std::vector<std::string> ownerUidsOf(const json& object);

inline bool isFinalStateUnknown(const json& object) {
  auto meta = object.find("metadata");
  return meta == object.end() || !meta->is_object() || !meta->contains("uid");
}
using WatchCallback = std::function<void(WatchEventType, const json&)>;
// An object as the server last returned it, shared and never modified: caches and the simulated
// API server hand these out instead of deep copies (as client-go informers share their objects).
using Snapshot = std::shared_ptr<const json>;
using SnapshotCallback = std::function<void(WatchEventType, const Snapshot&)>;
// An object's CBOR encoding (nlohmann's to_cbor), shared and never modified.
using Packed = std::shared_ptr<const std::vector<uint8_t>>;
// An object's CBOR as a cache or a store keeps it: without the spare capacity the encoder
// leaves (it grows its buffer by doubling: half as much again, kept for the object's lifetime).
Packed pack(const json& object);
using PackedCallback = std::function<void(WatchEventType, const Snapshot&, const Packed&)>;
inline Snapshot snapshotOf(json object) {
  return std::make_shared<const json>(std::move(object));
}
enum class Propagation { Background, Foreground, Orphan };

class KubeClient {
 public:
  virtual ~KubeClient() = default;
  // kind is the resource kind ("RayJob", "RayCluster", "Job", "Pod", "Service", "Event").
  virtual std::optional<json> get(const std::string& kind, const std::string& ns,
                                  const std::string& name) = 0;
  // A read that bypasses any cache (adoption after AlreadyExists, recovery of in-doubt intents:
  // answers that must reflect the server now). Default: get().
  virtual std::optional<json> getLive(const std::string& kind, const std::string& ns,
                                      const std::string& name) {
    return get(kind, ns, name);
  }
  // get() without the copy where the implementation keeps snapshots (caches); nullptr when
  // absent. The object must not be modified (copy it to write it back).
  virtual Snapshot getSnapshot(const std::string& kind, const std::string& ns,
                               const std::string& name) {
    auto found = get(kind, ns, name);
    return found ? std::make_shared<const json>(std::move(*found)) : nullptr;
  }
  virtual std::vector<json> list(const std::string& kind, const std::string& ns,
                                 const std::map<std::string, std::string>& labels = {}) = 0;
  // Objects of kind in ns (every namespace when empty) whose ownerReferences name ownerUid: the
  // owner index a controller's informer keeps (controller-runtime's field indexer). The default
  // lists and filters; caches and the simulated API server answer from an index.
  virtual std::vector<Snapshot> listOwned(const std::string& kind, const std::string& ns,
                                          const std::string& ownerUid);
  // The objects listOwned answers, handed to visit one at a time, so that a reader that keeps
  // only a few facts of each never holds them all (a cache that packs its objects decodes one
  // at a time). visit may run under the client's lock: it must not call this client.
  virtual void forEachOwned(const std::string& kind, const std::string& ns,
                            const std::string& ownerUid,
                            const std::function<void(const json&)>& visit);
  // Throws ApiError 409 AlreadyExists when the name is taken.
  virtual Snapshot create(const std::string& kind, json object) = 0;
  // create() whose answer nobody reads (an Event): same errors, but a client may skip decoding
  // the answer. Default: create(), answer dropped.
  virtual void post(const std::string& kind, json object) { create(kind, std::move(object)); }
  // An answer as a cache that keeps its objects encoded takes it: the object, and its CBOR when
  // the client decoded the wire straight into one; then `object` may be only the head (all of it
  // but its spec).
  struct Encoded {
    Snapshot object;
    Packed packed;
  };
  // create() for such a cache: same errors. By default create()'s whole answer, no encoding.
  virtual Encoded createEncoded(const std::string& kind, json object) {
    return {create(kind, std::move(object)), nullptr};
  }
  // post() for many objects at once (the REST client pipelines them on one connection).
  // Returns, in order, nothing for each object created and the error for each not; whether an
  // object whose error is a broken connection was created is unknown. Never throws for one
  // object. By default, post() one by one.
  virtual std::vector<std::optional<ApiError>> postAll(const std::string& kind,
                                                       std::vector<json> objects);
  // Spec/metadata write. Throws 409 Conflict on a stale metadata.resourceVersion, 404.
  virtual Snapshot update(const std::string& kind, json object) = 0;
  // Status subresource write; same preconditions.
  virtual Snapshot updateStatus(const std::string& kind, json object) = 0;
  // update() for a cache that keeps its objects encoded: same errors; the whole answer, and its
  // encoding when the client has it at hand (the simulated API server's stored bytes). By
  // default update()'s answer, no encoding.
  virtual Encoded updateEncoded(const std::string& kind, json object) {
    return {update(kind, std::move(object)), nullptr};
  }
  // updateStatus() for a cache that keeps its objects encoded: same errors, the answer as
  // createEncoded gives it. When it is the head alone, the spec is the one `object` carries (a
  // status write leaves the spec as it was at the resourceVersion it was checked against). By
  // default updateStatus()'s whole answer, no encoding.
  virtual Encoded updateStatusEncoded(const std::string& kind, const json& object) {
    return {updateStatus(kind, object), nullptr};
  }
  // Throws 404 NotFound when absent.
  virtual void remove(const std::string& kind, const std::string& ns, const std::string& name,
                      Propagation propagation = Propagation::Background) = 0;
  // Calls back for every change of that kind, from a thread of the implementation's choosing,
  // starting with Added for every existing object. The callback must not block for long.
  // A Deleted event may carry only the object's kind, name, namespace and resourceVersion, no
  // uid (isFinalStateUnknown): the object vanished while no watch was open, and a cache in front
  // delivers its own last state instead (client-go's DeletedFinalStateUnknown).
  virtual void watch(const std::string& kind, WatchCallback callback) = 0;
  // watch() delivering shared snapshots; by default each event is copied once into one.
  virtual void watchSnapshots(const std::string& kind, SnapshotCallback callback) {
    watch(kind, [callback = std::move(callback)](WatchEventType type, const json& object) {
      callback(type, std::make_shared<const json>(object));
    });
  }
  // watchSnapshots() that also hands over the object's CBOR encoding when the implementation
  // has one (the simulated API server stores objects so; the REST client decodes the wire into
  // one), for a cache to keep instead of encoding the object again; by default it is null.
  // When the encoding is not null it is the whole object, and the snapshot may be only the
  // object's head: all of it but its spec.
  virtual void watchPacked(const std::string& kind, PackedCallback callback) {
    watchSnapshots(kind, [callback = std::move(callback)](WatchEventType type,
                                                          const Snapshot& object) {
      callback(type, object, nullptr);
    });
  }
  // Every watch() so far has delivered its first complete list (Added for every object).
  virtual bool watchesSynced() const { return true; }
  // Who last wrote the object's spec (newestSpecManager of its managedFields); "" when unknown
  // or absent. A live read, asked only when the spec changed under the operator (the Ray
  // autoscaler's patch), for the journal's account of who changed it. Default: unknown.
  virtual std::string specManager(const std::string& kind, const std::string& ns,
                                  const std::string& name);
};

// The manager of the newest managedFields entry that owns a spec field, status subresource
// writes aside (ties: the later entry); "" when none does. managedFields as the API server
// serves them: [{manager, operation, time, subresource, fieldsV1: {"f:spec": ...}}].
std::string newestSpecManager(const json& managedFields);

}  // namespace rayjournal::kube
