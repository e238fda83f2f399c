#include "wal/RecordCodec.h"

#include <cstring>

#include "wal/Coding.h"
#include "wal/JournalError.h"

namespace rayjournal::wal {

std::string encodeRecord(const Record& r) {
  std::string payload;
  payload.reserve(64 + r.object.name.size() + r.body.size());
  payload.push_back(static_cast<char>(r.type));
  putFixed(payload, static_cast<uint64_t>(r.timeMs), 8);
  putVarint(payload, r.epoch);
  putVarint(payload, r.attempt);
  putString(payload, r.object.kind);
  putString(payload, r.object.ns);
  putString(payload, r.object.name);
  putString(payload, r.object.uid);
  // The back-pointer as a distance: one or two bytes for a busy object.
  if (r.previous) putVarint(payload, *r.previous == 0 ? 0 : r.seq - *r.previous);
  payload.append(r.body);

  std::string out;
  out.reserve(payload.size() + 5);
  out.push_back(static_cast<char>(r.previous ? kRecordFormatVersion : 1));
  putFixed(out, crc32(payload), 4);
  out.append(payload);
  return out;
}

void verifyRecord(uint64_t seq, std::string_view value) {
  if (value.size() < 5)
    throw CorruptionError(seq, "truncated value (" + std::to_string(value.size()) + " bytes)");
  uint8_t version = uint8_t(value[0]);
  if (version > kRecordFormatVersion) {
    throw JournalError("journal record seq " + std::to_string(seq) + " has format version " +
                       std::to_string(version) + " but this build reads up to version " +
                       std::to_string(kRecordFormatVersion) + "; upgrade rayjournal");
  }
  if (version == 0) throw CorruptionError(seq, "format version 0 is invalid");
  ByteReader header(seq, value.substr(1, 4));
  if (crc32(value.substr(5)) != uint32_t(header.fixed(4)))
    throw CorruptionError(seq, "checksum mismatch");
}

Record decodeRecord(uint64_t seq, std::string_view value) {
  verifyRecord(seq, value);
  std::string_view payload = value.substr(5);
  ByteReader in(seq, payload);
  Record r;
  r.seq = seq;
  uint8_t type = uint8_t(in.fixed(1));
  if (!isKnownRecordType(type))
    throw CorruptionError(seq, "unknown record type " + std::to_string(type));
  r.type = static_cast<RecordType>(type);
  r.timeMs = static_cast<int64_t>(in.fixed(8));
  r.epoch = in.varint();
  r.attempt = static_cast<uint32_t>(in.varint());
  r.object.kind = in.string();
  r.object.ns = in.string();
  r.object.name = in.string();
  r.object.uid = in.string();
  if (uint8_t(value[0]) >= 2) {
    uint64_t distance = in.varint();
    if (distance >= seq && distance != 0)
      throw CorruptionError(seq, "back-pointer " + std::to_string(distance) +
                                     " records back reaches before seq 1");
    r.previous = distance == 0 ? 0 : seq - distance;
  }
  r.body = std::string(in.rest());
  return r;
}

bool decodeChainKey(uint64_t seq, std::string_view value, std::string& indexKey) {
  verifyRecord(seq, value);
  if (uint8_t(value[0]) < 2) return false;
  ByteReader in(seq, value.substr(5));
  in.fixed(1);  // type
  in.fixed(8);  // time
  in.varint();      // epoch
  in.varint();      // attempt
  std::string kind = in.string(), ns = in.string(), name = in.string();
  if (kind.empty() && ns.empty() && name.empty()) return false;
  indexKey = ObjectRef{std::move(kind), std::move(ns), std::move(name), ""}.indexKey();
  return true;
}

std::string encodeSeqKey(uint64_t seq) {
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>((seq >> (8 * (7 - i))) & 0xff);
  return key;
}

uint64_t decodeSeqKey(std::string_view key) {
  uint64_t seq = 0;
  if (key.size() < 8) return 0;
  for (size_t i = key.size() - 8; i < key.size(); ++i) seq = (seq << 8) | uint8_t(key[i]);
  return seq;
}

std::string encodeObjectIndexKey(std::string_view indexKey, uint64_t seq) {
  return objectIndexPrefix(indexKey) + encodeSeqKey(seq);
}

std::string objectIndexPrefix(std::string_view indexKey) {
  std::string prefix(indexKey);
  prefix.push_back('\0');
  return prefix;
}

}  // namespace rayjournal::wal
