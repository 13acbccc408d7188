// The MCAP reader's data section: scan() walks it record by record (the messages outside chunks and
// those in chunks alike), checking chunk and data-section CRCs, with the chunks of the records ahead
// decompressed in parallel; read() and view() find one message again, decompressing its chunk once
// through a small cache that threads share.
#include <libdeflate.h>
#include <tbb/parallel_pipeline.h>
#include <zlib.h>

#include <atomic>
#include <exception>

#include "compression.h"
#include "mcap_reader_impl.h"

namespace depthmask::mcap {
namespace {

namespace f = detail::mcap_format;
using reader_detail::kMessageHead;
using reader_detail::Records;
using Bytes = reader_detail::Bytes;
using ChunkPtr = reader_detail::ChunkPtr;

constexpr uint64_t kMaxChunkBytes = uint64_t{2} << 30;  // a decompressed chunk's bound: 2 GiB
constexpr uint64_t kMaxRatio = 1000;                    // and 1000x its compressed size ...
constexpr uint64_t kRatioFloor = uint64_t{64} << 20;    // ... once over 64 MiB (zeros compress far)
constexpr size_t kCachedChunks = 4;
// The records a scan has in flight (read, being decompressed, waiting for their turn): enough for a
// few cores, bounded in memory (chunks of 4 MiB: some 40 MiB).
constexpr size_t kInFlight = 8;

// A record of the data section read ahead of its turn, its chunk decompressed (or why not).
struct Ahead {
  uint8_t op = 0;
  uint64_t pos = 0;
  uint64_t len = 0;
  Bytes content;
  ChunkPtr chunk;
  std::exception_ptr error;
};

}  // namespace

ChunkPtr Reader::Impl::decode_chunk(uint64_t at, const uint8_t* p, uint64_t n) const {
  constexpr uint8_t op = f::kChunk;
  try {
    f::Fields r(p, static_cast<size_t>(n));
    r.u64();  // message_start_time
    r.u64();  // message_end_time
    const uint64_t usize = r.u64();
    const uint32_t crc = r.u32();
    const std::string compression = r.str("compression");
    const uint64_t csize = r.u64();
    const uint8_t* data = r.bytes(csize, "records");
    if (usize > kMaxChunkBytes) fail(op, at, "its uncompressed size " + std::to_string(usize) + " is over 2 GiB");
    if (compression.empty() && usize != csize) {
      fail(op, at, "it is uncompressed but declares " + std::to_string(usize) + " bytes for " + std::to_string(csize));
    }
    if (!compression.empty() && usize > std::max(kRatioFloor, csize * kMaxRatio)) {
      fail(op, at,
           "its uncompressed size " + std::to_string(usize) + " is over 1000 times its " + std::to_string(csize) +
               " compressed bytes");
    }
    auto out = std::make_shared<Records>(static_cast<size_t>(usize), buffers);
    std::string why;
    if (compression.empty()) {
      if (csize > 0) std::memcpy(out->data(), data, csize);
    } else if (compression == "zstd" || compression == "lz4") {
      why = compression == "zstd" ? detail::zstd_decompress(data, csize, out->data(), out->size())
                                  : detail::lz4f_decompress(data, csize, out->data(), out->size());
    } else {
      why = "its compression '" + compression + "' is not one depthmask reads (zstd, lz4 or none)";
    }
    if (!why.empty()) fail(op, at, "it does not decompress: " + why);
    const uLong got = out->size() == 0 ? 0 : ::libdeflate_crc32(0, out->data(), out->size());
    if (crc != 0 && static_cast<uint32_t>(got) != crc) {
      fail(op, at, "the CRC of its records differs from the one it records (the chunk is damaged)");
    }
    return out;
  } catch (const f::FieldError& e) {
    fail(op, at, e.what());
  }
}

ChunkPtr Reader::Impl::chunk(uint64_t at) {
  std::promise<ChunkPtr> made;
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == at) {
        cache.splice(cache.begin(), cache, it);
        const std::shared_future<ChunkPtr> ready = it->second;
        return ready.get();  // waits while another thread decompresses it; its error is this one's
      }
    }
    const auto k = kept.find(at);
    if (k != kept.end()) made.set_value(k->second);  // moves into the cache, which now serves it
    cache.emplace_front(at, made.get_future().share());
    if (cache.size() > kCachedChunks) cache.pop_back();  // its waiters hold their own future
    if (k != kept.end()) {
      kept_bytes -= k->second->size();
      kept.erase(k);
      return cache.front().second.get();
    }
  }
  try {
    const auto [op, len] = head(at, size);
    if (op != f::kChunk) fail(op, at, "a Chunk was expected there");
    Bytes buf;
    read_content(op, at, len, buf);
    ChunkPtr c = decode_chunk(at, buf.data(), len);
    made.set_value(c);
    return c;
  } catch (...) {
    made.set_exception(std::current_exception());
    throw;
  }
}

void Reader::Impl::keep(uint64_t at, const ChunkPtr& c) {
  std::lock_guard<std::mutex> lock(cache_mu);
  if (kept_bytes + c->size() > keep_budget || kept.count(at) != 0) return;
  kept.emplace(at, c);
  kept_bytes += c->size();
}

bool Reader::Impl::chunk_records(uint64_t at, const Records& records, bool messages, const Visit& visit) {
  const uint64_t n = records.size();
  for (uint64_t pos = 0; pos < n;) {
    const std::string where = "at byte " + std::to_string(pos) + " of its records, ";
    if (n - pos < f::kRecordHead) fail(f::kChunk, at, where + "a record's head is cut off");
    const uint8_t op = records[pos];
    uint64_t len = 0;
    std::memcpy(&len, records.data() + pos + 1, 8);
    if (len > n - pos - f::kRecordHead) {
      fail(f::kChunk, at,
           where + "a " + f::op_name(op) + " record's length " + std::to_string(len) + " runs past them");
    }
    const uint8_t* p = records.data() + pos + f::kRecordHead;
    if (op == f::kSchema || op == f::kChannel) {
      add_definition(op, at, p, len);
    } else if (op == f::kMessage && messages) {
      MessageInfo m = message(f::kChunk, at, p, len, where);
      m.location = {at, pos};
      if (!visit(m, p + kMessageHead, static_cast<size_t>(len - kMessageHead))) return false;
    }
    pos += f::kRecordHead + len;
  }
  return true;
}

// A pipeline of three stages: the records read in order (one thread), their chunks decompressed
// (in parallel, a few records ahead), then delivered in order. Memory stays bounded by the records in
// flight. An error met while reading is thrown once the records before it are delivered, and a chunk
// that does not decompress once the records before it are.
void Reader::Impl::walk(bool messages, const Visit& visit) {
  const uint32_t magic_crc = static_cast<uint32_t>(::libdeflate_crc32(0, f::kMagic, f::kMagicSize));
  uLong crc = ::crc32(0, nullptr, 0);  // of the data section after the magic
  uint64_t pos = f::kMagicSize;
  bool read_all = false;               // the reading stage met the end (or an error)
  std::atomic<bool> delivered{false};  // the delivering stage met Data End, or the visitor stopped
  using Item = std::shared_ptr<Ahead>;
  const auto read = [&](tbb::flow_control& fc) -> Item {
    if (read_all || delivered) {
      fc.stop();
      return nullptr;
    }
    auto a = std::make_shared<Ahead>();
    try {
      for (;;) {
        if (summary && pos >= data_limit) break;
        if (!summary && pos == size) {
          throw InputError("MCAP file '" + file.string() + "' ends at byte " + std::to_string(size) +
                           " without its Data End record and footer (truncated, or still being written)");
        }
        const auto [op, len] = head(pos, data_limit);
        if (op == f::kFooter) break;  // a file without a Data End record
        const uint64_t at = pos;
        pos += f::kRecordHead + len;
        if (!messages && op != f::kSchema && op != f::kChannel && op != f::kChunk) continue;
        a->op = op;
        a->pos = at;
        a->len = len;
        read_content(op, at, len, a->content);
        read_all = op == f::kDataEnd;
        return a;
      }
    } catch (...) {
      a->op = 0;  // not a record: the error, delivered in its turn
      a->error = std::current_exception();
      read_all = true;
      return a;
    }
    read_all = true;
    fc.stop();
    return nullptr;
  };
  const auto decompress = [this](Item a) {
    if (a->op == f::kChunk) {
      try {
        a->chunk = decode_chunk(a->pos, a->content.data(), a->len);
      } catch (...) {
        a->error = std::current_exception();
      }
    }
    return a;
  };
  const auto deliver_one = [&](const Item& a) {
    if (a->error && a->op != f::kChunk) std::rethrow_exception(a->error);
    const Bytes& buf = a->content;
    if (a->op == f::kDataEnd) {
      delivered = true;
      uint32_t want = 0;
      if (a->len >= 4) std::memcpy(&want, buf.data(), 4);
      const auto from8 = static_cast<uint32_t>(crc);
      const auto from0 = static_cast<uint32_t>(::crc32_combine(magic_crc, crc, static_cast<z_off_t>(a->pos - 8)));
      // The reference writers count the leading magic in; accept a writer that starts after it too.
      if (messages && want != 0 && want != from0 && want != from8) {
        fail(a->op, a->pos, "the data section's CRC differs from the one it records (the file is damaged)");
      }
      return;
    }
    if (messages) {
      uint8_t h[f::kRecordHead] = {a->op};
      std::memcpy(h + 1, &a->len, 8);
      crc = ::libdeflate_crc32(static_cast<uint32_t>(crc), h, f::kRecordHead);
      if (!buf.empty()) crc = ::libdeflate_crc32(static_cast<uint32_t>(crc), buf.data(), buf.size());
    }
    if (a->op == f::kSchema || a->op == f::kChannel) {
      add_definition(a->op, a->pos, buf.data(), a->len);
    } else if (a->op == f::kMessage) {
      MessageInfo m = message(a->op, a->pos, buf.data(), a->len, "");
      m.location = {UINT64_MAX, a->pos};
      if (!visit(m, buf.data() + kMessageHead, static_cast<size_t>(a->len - kMessageHead))) delivered = true;
    } else if (a->op == f::kChunk) {
      if (a->error) std::rethrow_exception(a->error);
      if (messages) keep(a->pos, a->chunk);
      if (!chunk_records(a->pos, *a->chunk, messages, visit)) delivered = true;
    }
  };
  // No stage throws: an exception cancels oneTBB's pipeline, which then never frees the items still
  // between its stages (LeakSanitizer saw them). The first error stops the reading stage, the items in
  // flight drain through here untouched, and it is rethrown once the pipeline has returned.
  std::exception_ptr failure;
  const auto deliver = [&](const Item& a) {
    if (delivered) return;
    try {
      deliver_one(a);
    } catch (...) {
      failure = std::current_exception();
      delivered = true;
    }
  };
  tbb::parallel_pipeline(kInFlight, tbb::make_filter<void, Item>(tbb::filter_mode::serial_in_order, read) &
                                        tbb::make_filter<Item, Item>(tbb::filter_mode::parallel, decompress) &
                                        tbb::make_filter<Item, void>(tbb::filter_mode::serial_in_order, deliver));
  if (failure) std::rethrow_exception(failure);
}

void Reader::scan(const std::function<bool(const MessageInfo&, const uint8_t* data, size_t size)>& visit) {
  impl_->walk(true, visit);
}

// Touches only the file, its size and the chunk cache (under its lock), never the channel maps that a
// scan of a file without a summary may be adding to: safe from several threads.
Payload Reader::view(const MessageLocation& where) {
  Impl& m = *impl_;
  if (where.chunk_offset == UINT64_MAX) {
    const auto [op, len] = m.head(where.offset, m.size);
    if (op != f::kMessage) m.fail(op, where.offset, "a Message was expected there");
    if (len < kMessageHead) m.fail(op, where.offset, "it is shorter than a Message's 22-byte head");
    auto buf = std::make_shared<Bytes>();
    m.read_content(op, where.offset, len, *buf);
    return {buf, buf->data() + kMessageHead, buf->size() - kMessageHead};
  }
  const ChunkPtr c = m.chunk(where.chunk_offset);
  const uint64_t pos = where.offset;
  const std::string at = "at byte " + std::to_string(pos) + " of its records, ";
  if (pos > c->size() || c->size() - pos < f::kRecordHead || (*c)[pos] != f::kMessage) {
    m.fail(f::kChunk, where.chunk_offset, at + "no Message record is there");
  }
  uint64_t len = 0;
  std::memcpy(&len, c->data() + pos + 1, 8);
  if (len > c->size() - pos - f::kRecordHead) m.fail(f::kChunk, where.chunk_offset, at + "the Message runs past them");
  if (len < kMessageHead) m.fail(f::kChunk, where.chunk_offset, at + "the Message is shorter than its 22-byte head");
  const uint8_t* p = c->data() + pos + f::kRecordHead;
  return {c, p + kMessageHead, static_cast<size_t>(len - kMessageHead)};
}

void Reader::keep_scanned_chunks(uint64_t bytes) {
  const std::lock_guard<std::mutex> lock(impl_->cache_mu);
  impl_->keep_budget = bytes;
}

uint64_t Reader::kept_bytes() const {
  const std::lock_guard<std::mutex> lock(impl_->cache_mu);
  return impl_->kept_bytes;
}

std::vector<uint8_t> Reader::read(const MessageLocation& where) {
  const Payload p = view(where);
  return std::vector<uint8_t>(p.data, p.data + p.size);
}

}  // namespace depthmask::mcap
