// One object as the simulated API server keeps it: serialized, as etcd keeps bytes and not
// trees, with beside the bytes what the server's own logic reads without decoding them (the
// resourceVersion a write is checked against, the uid and owners the garbage collector
// follows, the labels a list filters on, finalizers and deletion). The bytes are CBOR
// (nlohmann's), a fifth to a tenth of a parsed document's memory. Pure; not thread-safe (the
// server's lock guards it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/kube/KubeClient.h"

namespace rayjournal::sim {

class StoredObject {
 public:
  // Encodes object (which must have metadata) and indexes its metadata.
  StoredObject(std::string kind, const kube::json& object);

  const std::string& kind() const { return kind_; }
  const std::string& resourceVersion() const { return resourceVersion_; }
  const std::string& uid() const { return uid_; }
  const std::vector<std::string>& ownerUids() const { return ownerUids_; }
  bool hasFinalizers() const { return hasFinalizers_; }
  bool deleting() const { return deleting_; }
  // Every label in `labels` is on the object with that value.
  bool hasLabels(const std::map<std::string, std::string>& labels) const;

  // What a reader takes under the server's lock and decodes after it: the snapshot still held
  // by someone (the last one written or read) or else the bytes. Cheap to copy.
  class Handle {
   public:
    // The object. Decodes the bytes unless a live snapshot was found.
    kube::Snapshot snapshot() const;

   private:
    friend class StoredObject;
    kube::Snapshot live_;
    kube::Packed bytes_;
  };
  Handle handle() const;
  // Decodes now (a caller that needs the object under the lock).
  kube::json decode() const;
  // Remembers a snapshot of this same object that callers may still hold, so that reads while it
  // lives share it instead of decoding (weakly: it does not keep the tree alive).
  void shareWhileHeld(const kube::Snapshot& snapshot) { decoded_ = snapshot; }

  size_t bytes() const { return bytes_->size(); }
  const kube::Packed& packed() const { return bytes_; }

 private:
  std::string kind_;
  kube::Packed bytes_;
  std::string resourceVersion_, uid_;
  std::vector<std::pair<std::string, std::string>> labels_;
  std::vector<std::string> ownerUids_;
  bool hasFinalizers_ = false;
  bool deleting_ = false;
  std::weak_ptr<const kube::json> decoded_;
};

}  // namespace rayjournal::sim
