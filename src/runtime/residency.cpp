// Residency manager: device-memory budget, LRU eviction of unpinned storages, pinning.
// Eviction downloads the bytes to the host and frees the device buffer; the Storage (and so
// every Tensor handle on it) stays valid and is re-uploaded on its next use.
#include <algorithm>

#include "wgt/runtime.hpp"

namespace wgt {

namespace {
constexpr uint64_t kDefaultBudget = 4ull << 30;  // used when the adapter reports no heaps
// Exact: a rounded figure cannot tell a request that misses by one byte from one that fits.
std::string bytes(uint64_t b) { return std::to_string(b) + " bytes"; }
}  // namespace

// Every public entry takes the runtime lock (recursive: they call each other).

uint64_t Runtime::memory_budget(int device_index) {
  auto lk = lock();
  if (policy_.memory_budget) return policy_.memory_budget;
  DeviceBackend* b = webgpu_backend(device_index);
  uint64_t heap = b ? b->memory_heap_bytes() : 0;
  // Leave 10% of a reported heap for the driver, other processes and Dawn's own allocations.
  return heap ? heap / 10 * 9 : kDefaultBudget;
}

void Runtime::track(Storage& s) {
  // Every device op tracks its outputs, so dead entries pile up between the budget checks
  // that no longer walk the list (ensure_room's fast path): prune when the list doubled since
  // the last prune (amortized O(1) per track).
  if (residents_.size() >= prune_at_) {
    prune_residents();
    prune_at_ = std::max<size_t>(1024, 2 * residents_.size());
  }
  residents_.push_back({s.weak_from_this(), s.nbytes()});
  tracked_bytes_ += s.nbytes();
  s.set_tracked();
}

void Runtime::prune_residents() {
  uint64_t bytes = 0;
  auto live = residents_.begin();
  for (auto& r : residents_) {  // in place, no allocation
    if (r.storage.expired()) continue;
    bytes += r.bytes;
    if (&*live != &r) *live = std::move(r);
    ++live;
  }
  residents_.erase(live, residents_.end());
  tracked_bytes_ = bytes;
}

MemoryStats Runtime::memory_stats(int device_index) {
  auto lk = lock();
  MemoryStats m;
  m.budget = memory_budget(device_index);
  prune_residents();
  for (auto& r : residents_) {
    auto s = r.storage.lock();
    if (!s || s->device().index != device_index) continue;
    if (s->resident()) {
      m.resident += s->nbytes();
      if (s->pinned()) m.pinned += s->nbytes();
    } else {
      m.evicted_tensors++;
    }
  }
  if (DeviceBackend* b = webgpu_backend(device_index)) {
    m.allocated = b->bytes_allocated();
    m.pooled = b->bytes_pooled();
  }
  if (m.allocated < m.resident) m.allocated = m.resident;  // backend without accounting
  return m;
}

void Runtime::ensure_room(Device d, uint64_t nbytes, const char* op) {
  auto lk = lock();
  if (make_room(d, nbytes, op)) return;
  const uint64_t budget = memory_budget(d.index);
  MemoryStats m = memory_stats(d.index);
  throw_error(ErrorKind::OutOfMemory, op,
              "need " + bytes(nbytes) + " more on " + d.str() + " but the budget is " + bytes(budget) + " and " +
                  bytes(m.pinned) + " are pinned, " + bytes(m.resident - m.pinned) +
                  " are in use by this op or not evictable; unpin tensors, free them, or raise the budget "
                  "(Policy::memory_budget / WGT_MEMORY_BUDGET)");
}

bool Runtime::make_room(Device d, uint64_t nbytes, const char* op) {
  auto lk = lock();
  const uint64_t budget = memory_budget(d.index);
  DeviceBackend& b = device_backend(d, op);
  // Same quantity as max(bytes_allocated, memory_stats().resident), without building the
  // stats: this runs for every device op (twice: outputs, then their upload).
  auto used = [&] {
    prune_residents();  // in place, no allocation
    uint64_t resident = 0;
    for (auto& r : residents_)
      if (auto s = r.storage.lock(); s && s->device().index == d.index && s->resident()) resident += s->nbytes();
    return std::max(b.bytes_allocated(), resident);
  };
  // Fast path, without the walk (O(tracked storages), twice per device op: hundreds of
  // weights make it tens of us): tracked_bytes_ bounds the resident bytes from above, so if
  // the bound fits, used() fits too.
  if (std::max(b.bytes_allocated(), tracked_bytes_) + nbytes <= budget) return true;
  if (used() + nbytes <= budget) return true;
  b.release_cached();  // pooled free buffers go first: they hold no data
  if (used() + nbytes <= budget) return true;
  // Evict least-recently-used unpinned storages that the op in flight does not use.
  std::vector<std::shared_ptr<Storage>> candidates;
  for (auto& r : residents_)
    if (auto s = r.storage.lock(); s && s->device() == d && s->resident() && !s->pinned() && !s->mapped() &&
                                   s->last_use() < protect_from_)
      candidates.push_back(std::move(s));
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& c) { return a->last_use() < c->last_use(); });
  for (auto& s : candidates) {
    if (used() + nbytes <= budget) break;
    download(*s);
    s->set_buffer(nullptr);
    stats_.evictions++;
    b.release_cached();
  }
  return used() + nbytes <= budget;
}

uint64_t Runtime::unevictable_bytes(Device d) {
  uint64_t pinned = 0, resident = 0;
  prune_residents();
  for (auto& r : residents_)
    if (auto s = r.storage.lock(); s && s->device() == d && s->resident()) {
      resident += s->nbytes();
      if (s->pinned() || s->mapped()) pinned += s->nbytes();  // a mapped storage is not evicted either
    }
  // What the backend holds beyond tensors and its free pool (uniform rings, scratch) is no
  // more evictable than a pinned tensor.
  uint64_t other = 0;
  if (DeviceBackend* b = webgpu_backend(d.index)) {
    const uint64_t held = b->bytes_allocated() - std::min(b->bytes_allocated(), b->bytes_pooled());
    other = held > resident ? held - resident : 0;
  }
  return pinned + other;
}

void Runtime::make_resident(Storage& s, const char* op) {
  s.touch(++tick_);
  if (s.resident()) return;
  ensure_room(s.device(), s.nbytes(), op);
  upload(s);
}

void Runtime::pin(const Tensor& t) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, "pin", "tensor is undefined");
  if (!t.device().is_webgpu())
    throw_error(ErrorKind::InvalidArgument, "pin", "only device tensors can be pinned; " + t.str() + " is on the host");
  auto lk = lock();
  InFlight guard(*this);
  make_resident(*t.storage(), "pin");
  t.storage()->add_pin();
}

void Runtime::unpin(const Tensor& t) {
  if (!t.defined()) throw_error(ErrorKind::InvalidArgument, "unpin", "tensor is undefined");
  auto lk = lock();
  if (!t.storage()->pinned())
    throw_error(ErrorKind::InvalidArgument, "unpin",
                t.str() + " is not pinned (every unpin() must match an earlier pin() of its storage)");
  t.storage()->drop_pin();
}

bool Runtime::is_resident(const Tensor& t) const {
  auto lk = lock();
  return t.defined() && t.storage()->resident();
}

}  // namespace wgt
