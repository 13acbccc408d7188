// The raw-CDR sertype (raw_cdr_type.h) for CycloneDDS 0.10's ddsi_sertype_ops / ddsi_serdata_ops, as
// a custom type such as rmw_cyclonedds's plugs in. Topics are keyless: every key operation is trivial.
#include "raw_cdr_type.h"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/q_radmin.h>

#include <cstdio>
#include <cstring>
#include <new>

namespace depthmask::detail {
namespace {

// The serdata: CycloneDDS's header first (it casts between the two), then the shared payload.
struct RawSerdata {
  ddsi_serdata c;
  CdrBytes bytes;
};

struct RawSertype {
  ddsi_sertype c;
};

const ddsi_serdata_ops& serdata_ops();

RawSerdata* new_serdata(const ddsi_sertype* type, ddsi_serdata_kind kind, CdrBytes bytes) {
  auto* d = new (std::nothrow) RawSerdata();
  if (!d) return nullptr;
  ddsi_serdata_init(&d->c, type, kind);
  d->c.hash = type ? type->serdata_basehash : 0;
  d->bytes = bytes ? std::move(bytes) : std::make_shared<const std::vector<uint8_t>>();
  return d;
}

const RawSerdata* raw(const ddsi_serdata* d) { return reinterpret_cast<const RawSerdata*>(d); }

bool eqkey(const ddsi_serdata*, const ddsi_serdata*) { return true; }  // keyless: one instance

uint32_t get_size(const ddsi_serdata* d) { return static_cast<uint32_t>(raw(d)->bytes->size()); }

// Received fragments (possibly overlapping) joined into one buffer, as CycloneDDS's own serdata does.
ddsi_serdata* from_ser(const ddsi_sertype* type, ddsi_serdata_kind kind, const nn_rdata* frag, size_t size) {
  auto buf = std::make_shared<std::vector<uint8_t>>(size);
  uint32_t off = 0;
  for (; frag; frag = frag->nextfrag) {
    if (frag->maxp1 <= off) continue;
    const unsigned char* payload = NN_RMSG_PAYLOADOFF(frag->rmsg, NN_RDATA_PAYLOAD_OFF(frag));
    const uint32_t end = frag->maxp1 > size ? static_cast<uint32_t>(size) : frag->maxp1;
    if (end > off) std::memcpy(buf->data() + off, payload + (off - frag->min), end - off);
    off = end;
  }
  RawSerdata* d = new_serdata(type, kind, std::move(buf));
  return d ? &d->c : nullptr;
}

ddsi_serdata* from_ser_iov(const ddsi_sertype* type, ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov,
                           const ddsrt_iovec_t* iov, size_t size) {
  auto buf = std::make_shared<std::vector<uint8_t>>();
  buf->reserve(size);
  for (ddsrt_msg_iovlen_t i = 0; i < niov; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    buf->insert(buf->end(), p, p + iov[i].iov_len);
  }
  RawSerdata* d = new_serdata(type, kind, std::move(buf));
  return d ? &d->c : nullptr;
}

ddsi_serdata* from_keyhash(const ddsi_sertype* type, const ddsi_keyhash*) {
  RawSerdata* d = new_serdata(type, SDK_KEY, nullptr);
  return d ? &d->c : nullptr;
}

// The write path: the serdata shares the caller's buffer; nothing is copied.
ddsi_serdata* from_sample(const ddsi_sertype* type, ddsi_serdata_kind kind, const void* sample) {
  const auto* s = static_cast<const RawCdrSample*>(sample);
  RawSerdata* d = new_serdata(type, kind, kind == SDK_DATA ? s->bytes : nullptr);
  return d ? &d->c : nullptr;
}

void to_ser(const ddsi_serdata* d, size_t off, size_t sz, void* buf) {
  std::memcpy(buf, raw(d)->bytes->data() + off, sz);
}

ddsi_serdata* to_ser_ref(const ddsi_serdata* d, size_t off, size_t sz, ddsrt_iovec_t* ref) {
  ref->iov_base = const_cast<uint8_t*>(raw(d)->bytes->data() + off);
  ref->iov_len = static_cast<ddsrt_iov_len_t>(sz);
  return ddsi_serdata_ref(d);
}

void to_ser_unref(ddsi_serdata* d, const ddsrt_iovec_t*) { ddsi_serdata_unref(d); }

bool to_sample(const ddsi_serdata* d, void* sample, void** bufptr, void*) {
  if (bufptr) return false;
  static_cast<RawCdrSample*>(sample)->bytes = raw(d)->bytes;
  return true;
}

ddsi_serdata* to_untyped(const ddsi_serdata* d) {
  RawSerdata* u = new_serdata(d->type, SDK_KEY, nullptr);
  if (!u) return nullptr;
  u->c.type = nullptr;
  return &u->c;
}

bool untyped_to_sample(const ddsi_sertype*, const ddsi_serdata*, void*, void**, void*) { return true; }

void free_serdata(ddsi_serdata* d) { delete reinterpret_cast<RawSerdata*>(d); }

size_t print(const ddsi_sertype*, const ddsi_serdata* d, char* buf, size_t size) {
  return static_cast<size_t>(std::snprintf(buf, size, "(%zu bytes of CDR)", raw(d)->bytes->size()));
}

void get_keyhash(const ddsi_serdata*, ddsi_keyhash* buf, bool) { std::memset(buf, 0, sizeof *buf); }

const ddsi_serdata_ops& serdata_ops() {
  static const ddsi_serdata_ops ops = [] {
    ddsi_serdata_ops o{};
    o.eqkey = eqkey;
    o.get_size = get_size;
    o.from_ser = from_ser;
    o.from_ser_iov = from_ser_iov;
    o.from_keyhash = from_keyhash;
    o.from_sample = from_sample;
    o.to_ser = to_ser;
    o.to_ser_ref = to_ser_ref;
    o.to_ser_unref = to_ser_unref;
    o.to_sample = to_sample;
    o.to_untyped = to_untyped;
    o.untyped_to_sample = untyped_to_sample;
    o.free = free_serdata;
    o.print = print;
    o.get_keyhash = get_keyhash;
    return o;
  }();
  return ops;
}

void free_sertype(ddsi_sertype* tp) {
  ddsi_sertype_fini(tp);
  delete reinterpret_cast<RawSertype*>(tp);
}

void zero_samples(const ddsi_sertype*, void* samples, size_t count) {
  auto* s = static_cast<RawCdrSample*>(samples);
  for (size_t i = 0; i < count; ++i) s[i].bytes.reset();
}

// Sample arrays for dds_read/dds_take with samples (depthmask itself takes serdata: dds_takecdr).
void realloc_samples(void** ptrs, const ddsi_sertype*, void* old, size_t oldcount, size_t count) {
  auto* fresh = new RawCdrSample[count];
  auto* prev = static_cast<RawCdrSample*>(old);
  for (size_t i = 0; i < oldcount && i < count; ++i) fresh[i] = std::move(prev[i]);
  delete[] prev;
  for (size_t i = 0; i < count; ++i) ptrs[i] = &fresh[i];
}

void free_samples(const ddsi_sertype*, void** ptrs, size_t count, dds_free_op_t op) {
  if (count == 0) return;
  auto* s = static_cast<RawCdrSample*>(ptrs[0]);
  if (op & DDS_FREE_CONTENTS_BIT)
    for (size_t i = 0; i < count; ++i) static_cast<RawCdrSample*>(ptrs[i])->bytes.reset();
  if (op & DDS_FREE_ALL_BIT) delete[] s;
}

bool equal(const ddsi_sertype*, const ddsi_sertype*) { return true; }  // the generic part (name, ops) decides
uint32_t hash(const ddsi_sertype*) { return 0; }

size_t serialized_size(const ddsi_sertype*, const void* sample) {
  return static_cast<const RawCdrSample*>(sample)->bytes->size();
}

bool serialize_into(const ddsi_sertype*, const void* sample, void* dst, size_t dst_size) {
  const auto& b = *static_cast<const RawCdrSample*>(sample)->bytes;
  if (dst_size < b.size()) return false;
  std::memcpy(dst, b.data(), b.size());
  return true;
}

const ddsi_sertype_ops& sertype_ops() {
  static const ddsi_sertype_ops ops = [] {
    ddsi_sertype_ops o{};
    o.version = ddsi_sertype_v0;
    o.free = free_sertype;
    o.zero_samples = zero_samples;
    o.realloc_samples = realloc_samples;
    o.free_samples = free_samples;
    o.equal = equal;
    o.hash = hash;
    o.get_serialized_size = serialized_size;
    o.serialize_into = serialize_into;
    return o;
  }();
  return ops;
}

}  // namespace

ddsi_sertype* make_raw_cdr_sertype(const std::string& dds_type) {
  auto* t = new RawSertype();
  ddsi_sertype_init(&t->c, dds_type.c_str(), &sertype_ops(), &serdata_ops(), true);
  t->c.allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1;
  return &t->c;
}

CdrBytes raw_cdr_bytes(const ddsi_serdata* d) {
  if (!d || d->ops != &serdata_ops()) return nullptr;
  return raw(d)->bytes;
}

}  // namespace depthmask::detail
