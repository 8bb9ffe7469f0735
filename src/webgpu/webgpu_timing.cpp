// WebGPU backend: GPU timing. Per-dispatch kernel profiling and whole-batch timing with
// timestamp queries, and the per-kernel tallies.
#include "webgpu/webgpu_backend.hpp"

#include <algorithm>

#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

// ---- profiling ----

uint32_t WebGPUBackend::timed_capacity() const { return std::min(max_batch_, kMaxTimedPerBatch); }

// Switches one of the timestamp modes (per-dispatch profiling, batch timing); the open batch
// keeps the mode it was recorded in.
void WebGPUBackend::set_timing_mode(bool& mode, bool on, const char* what) {
  if (on && !features().timestamp_query)
    throw_error(ErrorKind::Unsupported, std::string("webgpu ") + what,
                std::string("GPU ") + what + " needs the timestamp-query feature, which " + name() + " ('" +
                    dev_->desc().name + "') does not offer; time on the host instead (wall time between synchronize() calls)");
  if (on == mode) return;
  flush();
  if (on) ensure_query_set();
  mode = on;
}

void WebGPUBackend::set_profiling(bool on) { set_timing_mode(profiling_, on, "kernel timing"); }

void WebGPUBackend::ensure_query_set() {
  const uint32_t need = 2 * timed_capacity();
  if (query_set_ && query_count_ >= need && query_read_) return;
  const Procs& p = dev_->p();
  // No profiled batch is in flight here (each waits for its timestamps in flush), so the
  // old set and buffers can go.
  if (query_set_) p.QuerySetRelease(query_set_);
  for (Buffer* b : {&query_resolve_, &query_read_})
    if (*b) p.BufferRelease(*b);
  query_set_ = nullptr;
  query_resolve_ = query_read_ = nullptr;
  query_count_ = 0;
  QuerySetDescriptor qd;
  qd.label = {"wgtensor profile", kStrlen};
  qd.type = QueryType::Timestamp;
  qd.count = need;
  dev_->push_scope(ErrorFilter::Validation);
  QuerySet qs = p.DeviceCreateQuerySet(dev_->handle(), &qd);
  const std::string err = dev_->pop_scope();
  if (!qs || !err.empty()) {
    if (qs) p.QuerySetRelease(qs);
    throw_error(ErrorKind::RuntimeState, "webgpu profile",
                "could not create a timestamp query set of " + std::to_string(need) + " queries: " + err);
  }
  query_set_ = qs;
  query_resolve_ = create_buffer(*dev_, usage::QueryResolve | usage::CopySrc, uint64_t{8} * need, "webgpu profile");
  query_read_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, uint64_t{8} * need, "webgpu profile");
  query_count_ = need;
}

void WebGPUBackend::set_batch_timing(bool on) { set_timing_mode(batch_timing_, on, "batch timing"); }

void WebGPUBackend::collect_batch_time(const Batch& b) {
  // Waits for this batch, like collect_timestamps: the host no longer runs ahead, but the
  // GPU time of the batch itself (its dispatches back to back) is what is measured.
  const Procs& p = dev_->p();
  uint64_t ts[2] = {0, 0};
  map_read(query_read_, sizeof ts, 0, ts, sizeof ts, "webgpu batch timing", [&] {
    p.BufferRelease(query_read_);  // as in collect_timestamps: ensure_query_set makes a new one
    query_read_ = nullptr;
  });
  if (ts[1] < ts[0]) {
    ++profile_dropped_;
    return;
  }
  batch_time_.batches += 1;
  batch_time_.dispatches += b.dispatches;
  batch_time_.gpu_ns += ts[1] - ts[0];
}

BatchTime WebGPUBackend::batch_time(bool reset) {
  flush();
  const BatchTime t = batch_time_;
  if (reset) batch_time_ = {};
  return t;
}

void WebGPUBackend::collect_timestamps(const Batch& b) {
  // Waits for this batch: the price of per-kernel times (documented in docs/webgpu.md).
  const Procs& p = dev_->p();
  const size_t size = 16 * b.timed.size();
  std::vector<uint64_t> ts(2 * b.timed.size());
  map_read(query_read_, size, 0, ts.data(), size, "webgpu profile", [&] {
    // The map stays pending on this buffer: drop it; ensure_query_set makes a new one before
    // the next profiled batch (creating it here could throw and leave the released handle).
    p.BufferRelease(query_read_);
    query_read_ = nullptr;
  });
  for (size_t i = 0; i < b.timed.size(); ++i) {
    const uint64_t begin = ts[2 * i], end = ts[2 * i + 1];
    if (end < begin) {
      ++profile_dropped_;
      continue;
    }
    KernelTally& t = tallies_[b.timed[i]];
    const uint64_t ns = end - begin;
    ++t.count;
    t.total_ns += ns;
    t.min_ns = std::min(t.min_ns, ns);
    t.max_ns = std::max(t.max_ns, ns);
  }
}

std::vector<KernelProfile> WebGPUBackend::profile_snapshot() const {
  // Pipelines of the same variant in both layout modes (bind cache on/off) share a name.
  std::map<std::string, KernelProfile> by_name;
  for (const auto& [pl, t] : tallies_) {
    KernelProfile& k = by_name[pl->name];
    if (k.count == 0) {
      k.kernel = pl->name;
      k.min_ns = t.min_ns;
    }
    k.count += t.count;
    k.total_ns += t.total_ns;
    k.min_ns = std::min(k.min_ns, t.min_ns);
    k.max_ns = std::max(k.max_ns, t.max_ns);
  }
  std::vector<KernelProfile> out;
  for (auto& [n, k] : by_name)
    if (k.count) out.push_back(std::move(k));
  std::stable_sort(out.begin(), out.end(), [](const KernelProfile& a, const KernelProfile& b) { return a.total_ns > b.total_ns; });
  return out;
}

std::vector<KernelProfile> WebGPUBackend::profile(bool reset) {
  flush();
  dev_->check("webgpu profile");
  std::vector<KernelProfile> out = profile_snapshot();
  if (reset) profile_reset();
  return out;
}

void WebGPUBackend::profile_reset() {
  tallies_.clear();
  profile_dropped_ = 0;
}

}  // namespace wgt::webgpu
