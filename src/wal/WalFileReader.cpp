#include "wal/WalFileReader.h"

#include <rocksdb/write_batch.h>

#include <boost/crc.hpp>
#include <fstream>
#include <iterator>

namespace rayjournal::wal {
namespace {

constexpr size_t kBlockSize = 32768;
constexpr size_t kHeaderSize = 7;
constexpr size_t kRecyclableHeaderSize = 11;
enum Type : uint8_t { kZero = 0, kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4, kRecyclableLast = 8 };

using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

uint32_t fixed32(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
}

// LevelDB's masking: a crc stored inside crc-protected data must not look like a crc.
uint32_t unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

class BatchVisitor : public rocksdb::WriteBatch::Handler {
 public:
  BatchVisitor(const std::function<void(const WalEntry&)>& visit, size_t offset)
      : visit_(visit), offset_(offset) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    visit_({cf, true, {key.data(), key.size()}, {value.data(), value.size()}, offset_});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    visit_({cf, false, {key.data(), key.size()}, {}, offset_});
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice&) override {}

 private:
  const std::function<void(const WalEntry&)>& visit_;
  size_t offset_;
};

struct Assembler {
  const std::string& path;
  const std::function<void(const WalEntry&)>& visit;
  WalReadResult& result;
  std::string pending;
  bool inRecord = false;

  void problem(size_t offset, const std::string& cause) {
    result.problems.push_back(path + " offset " + std::to_string(offset) + ": " + cause);
    result.problemOffsets.push_back(offset);
  }
  void deliver(std::string batchBytes, size_t offset) {
    if (batchBytes.size() < 12) return problem(offset, "write batch shorter than its header");
    rocksdb::WriteBatch batch(std::move(batchBytes));
    BatchVisitor handler(visit, offset);
    rocksdb::Status status = batch.Iterate(&handler);
    if (!status.ok()) return problem(offset, "undecodable write batch: " + status.ToString());
    result.batches++;
  }
  void fragment(uint8_t type, std::string_view payload, size_t offset) {
    uint8_t base = type > kLast ? type - 4 : type;
    if (base == kFull || base == kFirst) {
      if (inRecord) problem(offset, "record without its last fragment (dropped)");
      pending.assign(payload);
      inRecord = base == kFirst;
      if (base == kFull) deliver(std::move(pending), offset);
    } else if (!inRecord) {
      problem(offset, "fragment without its first part (dropped)");
    } else {
      pending.append(payload);
      if (base == kLast) {
        inRecord = false;
        deliver(std::move(pending), offset);
      }
    }
  }
};

// Returns false when the rest of the block cannot be trusted.
bool readPhysical(const std::string& data, size_t& pos, size_t blockEnd, Assembler& out) {
  if (blockEnd - pos < kHeaderSize) return false;
  const char* h = data.data() + pos;
  uint8_t type = static_cast<uint8_t>(h[6]);
  size_t length = static_cast<unsigned char>(h[4]) | (static_cast<unsigned char>(h[5]) << 8);
  if (type == kZero && length == 0) return false;  // preallocated or padding
  size_t header = type > kLast ? kRecyclableHeaderSize : kHeaderSize;
  if (type > kRecyclableLast) {  // compression or timestamp metadata: not ours to interpret
    if (blockEnd - pos < header + length) return false;
    pos += kHeaderSize + length;
    return true;
  }
  if (type == kZero || blockEnd - pos < header + length) {
    out.problem(pos, "bad record header (type " + std::to_string(type) + ", length " +
                         std::to_string(length) + ")");
    return false;
  }
  Crc32c crc;
  crc.process_bytes(h + 6, header - 6 + length);
  if (crc.checksum() != unmask(fixed32(h))) {
    out.problem(pos, "checksum mismatch");
    out.inRecord = false;
    return false;
  }
  out.fragment(type, std::string_view(h + header, length), pos);
  pos += header + length;
  return true;
}

}  // namespace

WalReadResult readWalFile(const std::string& path,
                          const std::function<void(const WalEntry&)>& visit) {
  WalReadResult result;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    result.problems.push_back(path + ": cannot be opened");
    return result;
  }
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Assembler assembler{path, visit, result, {}, false};
  for (size_t block = 0; block < data.size(); block += kBlockSize) {
    size_t end = std::min(block + kBlockSize, data.size()), pos = block;
    while (readPhysical(data, pos, end, assembler)) {
    }
  }
  if (assembler.inRecord) assembler.problem(data.size(), "torn final record (never acknowledged)");
  return result;
}

}  // namespace rayjournal::wal
