#include "wal/ObjectHeads.h"

#include "wal/Coding.h"

namespace rayjournal::wal {

uint64_t ObjectHeads::find(const std::string& indexKey) const {
  auto it = seqs_.find(indexKey);
  return it == seqs_.end() ? 0 : it->second;
}

void ObjectHeads::note(const std::string& indexKey, uint64_t seq) {
  auto [it, added] = seqs_.try_emplace(indexKey, seq);
  if (!added && it->second < seq) it->second = seq;
}

void ObjectHeads::note(const Record& record) {
  if (record.previous && !record.object.empty()) note(record.object.indexKey(), record.seq);
}

void ObjectHeads::dropBefore(uint64_t seq) {
  std::erase_if(seqs_, [seq](const auto& entry) { return entry.second < seq; });
}

std::string ObjectHeads::encode() const {
  std::string out;
  out.reserve(16 + seqs_.size() * 40);
  putFixed(out, through, 8);
  putVarint(out, seqs_.size());
  for (const auto& [key, seq] : seqs_) {
    putString(out, key);
    putVarint(out, seq);
  }
  putFixed(out, crc32(out), 4);
  return out;
}

std::optional<ObjectHeads> ObjectHeads::decode(std::string_view bytes) {
  if (bytes.size() < 12) return std::nullopt;
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  ByteReader crc(0, bytes.substr(bytes.size() - 4));
  if (crc.fixed(4) != crc32(body)) return std::nullopt;
  try {
    ByteReader in(0, body);
    ObjectHeads heads;
    heads.through = in.fixed(8);
    uint64_t count = in.varint();
    if (count > body.size()) return std::nullopt;
    heads.seqs_.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      std::string key = in.string();
      heads.seqs_[std::move(key)] = in.varint();
    }
    if (!in.rest().empty()) return std::nullopt;
    return heads;
  } catch (const CorruptionError&) {
    return std::nullopt;
  }
}

}  // namespace rayjournal::wal
