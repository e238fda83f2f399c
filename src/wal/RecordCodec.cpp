#include "wal/RecordCodec.h"

#include <boost/crc.hpp>
#include <cstring>

#include "wal/JournalError.h"

namespace rayjournal::wal {
namespace {

uint32_t crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

void putFixed(std::string& out, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void putVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putString(std::string& out, std::string_view s) {
  putVarint(out, s.size());
  out.append(s);
}

// Reads the payload; every short read is a truncation.
class Reader {
 public:
  Reader(uint64_t seq, std::string_view in) : seq_(seq), in_(in) {}

  uint64_t fixed(int width) {
    need(width);
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= uint64_t(uint8_t(in_[i])) << (8 * i);
    in_.remove_prefix(width);
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      uint8_t b = uint8_t(in_[0]);
      in_.remove_prefix(1);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw CorruptionError(seq_, "malformed varint");
  }
  std::string string() {
    uint64_t n = varint();
    need(n);
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  std::string_view rest() const { return in_; }

 private:
  void need(uint64_t n) const {
    if (in_.size() < n) throw CorruptionError(seq_, "truncated value");
  }
  uint64_t seq_;
  std::string_view in_;
};

}  // namespace

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
  payload.append(r.body);

  std::string out;
  out.reserve(payload.size() + 5);
  out.push_back(static_cast<char>(kRecordFormatVersion));
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
  Reader header(seq, value.substr(1, 4));
  if (crc32(value.substr(5)) != uint32_t(header.fixed(4)))
    throw CorruptionError(seq, "checksum mismatch");
}

Record decodeRecord(uint64_t seq, std::string_view value) {
  verifyRecord(seq, value);
  std::string_view payload = value.substr(5);
  Reader in(seq, payload);
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
  r.body = std::string(in.rest());
  return r;
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
