// The WebGPU device backend: wgt::DeviceBackend for the runtime and webgpu::Context for the
// kernel launchers. Owns the buffer pool, the pipeline cache and the dispatch batch.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "webgpu/context.hpp"
#include "webgpu/device.hpp"
#include "webgpu/submissions.hpp"

namespace wgt::webgpu {

struct PoolStats {
  uint64_t bytes_allocated = 0;  // all live device buffers (in use + pooled)
  uint64_t bytes_in_use = 0;     // held by tensors
  uint64_t bytes_pooled = 0;     // free, kept for reuse
  uint64_t buffers_created = 0;  // wgpuDeviceCreateBuffer calls
  uint64_t reuses = 0;           // allocations served from the pool
};

struct BatchStats {
  uint64_t dispatches = 0;
  uint64_t submits = 0;
  uint64_t host_waits = 0;
  uint64_t pipelines = 0;
  uint64_t bind_groups_created = 0;  // wgpuDeviceCreateBindGroup calls for dispatches
  uint64_t bind_group_reuses = 0;    // dispatches served by a cached bind group
  uint64_t passes = 0;               // compute passes recorded: one per batch, or one per dispatch when profiling
  uint64_t timed_dispatches = 0;     // dispatches with GPU timestamps (profiling mode)
  uint64_t early_submits = 0;        // batches submitted early because the device was idle
  uint64_t session_splits = 0;       // submissions a device bound forced inside a session
  uint64_t session_copies = 0;       // uploads recorded into a session's command buffer
};

// GPU time of whole batches (batch timing mode): one timestamp at the beginning and one at
// the end of each batch's compute pass.
struct BatchTime {
  uint64_t batches = 0, dispatches = 0;
  uint64_t gpu_ns = 0;  // sum over the batches of end - begin
};

// GPU time of one kernel (pipeline key: shader name + defines), from timestamp queries.
struct KernelProfile {
  std::string kernel;
  uint64_t count = 0;
  uint64_t total_ns = 0, min_ns = 0, max_ns = 0;
};

class BufferPool;

class WebGPUBackend final : public DeviceBackend, public Context {
 public:
  WebGPUBackend(DawnInstance& inst, size_t adapter_index, int device_index);
  // Over a device made elsewhere (DawnDevice's adopting constructor), as Device::webgpu(device_index).
  WebGPUBackend(std::unique_ptr<DawnDevice> dev, int device_index);
  ~WebGPUBackend() override;

  // ---- wgt::DeviceBackend ----
  std::string name() const override { return "webgpu:" + std::to_string(index_); }
  wgt::Device device() const override { return wgt::Device::webgpu(index_); }
  Support supports(const OpCall& call) const override;
  void execute(OpCall& call) override;
  std::shared_ptr<DeviceBuffer> allocate(size_t nbytes) override;
  void write(const DeviceBuffer& dst, size_t offset, const void* src, size_t nbytes) override;
  void read(const DeviceBuffer& src, size_t offset, void* dst, size_t nbytes) override;
  void synchronize() override;
  void submit() override { flush(); }
  SubmissionCounters counters() const override;         // webgpu_session.cpp
  bool open_session() override;                         // webgpu_session.cpp
  void close_session() override;
  uint64_t domain() const override { return domain_; }
  uint64_t bytes_allocated() const override;
  uint64_t bytes_pooled() const override;
  void release_cached() override;
  bool is_software() const override { return dev_->desc().adapter_type == "cpu"; }
  uint64_t memory_heap_bytes() const override { return dev_->desc().memory_heap_bytes; }
  void* native_instance() const override { return dev_->instance_handle(); }
  void* native_device() const override { return dev_->handle(); }

  // ---- webgpu::Context ----
  const Features& features() const override { return dev_->features(); }
  const Limits& limits() const override { return dev_->limits(); }
  uint32_t subgroup_size() const override { return dev_->desc().subgroup_max; }
  const Pipeline* pipeline(const ShaderVariant& variant) override;
  using Context::pipeline;  // the PipelineKey overload
  const Pipeline* find_pipeline(const PipelineKey& id) override;
  void remember_pipeline(const PipelineKey& id, const Pipeline* p) override;
  void dispatch(const Dispatch& d) override;
  void flush() override;  // RuntimeState from a thread other than an open session's
  Tensor compact(const Tensor& t) override;
  Tensor scratch(const Shape& shape, DType dtype) override;
  void run_op(OpCall& call) override;
  uint64_t buffer_domain() const override { return domain_; }
  StatusFlag status_flag(const char* op) override;  // webgpu_status.cpp

  // ---- introspection ----
  const DawnDevice& dawn() const { return *dev_; }
  Limits& limits_for_testing() { return dev_->limits_for_testing(); }  // see DawnDevice
  PoolStats pool_stats() const;
  const BatchStats& batch_stats() const { return stats_; }
  void release_pool();  // frees every pooled (unused) buffer
  uint32_t max_batch() const { return max_batch_; }
  void set_max_batch(uint32_t n) { max_batch_ = n ? n : 1; }
  uint32_t early_batch() const { return early_batch_; }
  void set_early_batch(uint32_t n) { early_batch_ = n; }
  // Work submitted and not known to be complete (back-pressure, see submissions.hpp).
  const SubmissionQueue& in_flight() const { return *in_flight_; }
  void set_in_flight_limits(const InFlightLimits& l) { in_flight_->limits = l; }
  // Bind-group cache (explicit layouts with a dynamic-offset params uniform); applies to
  // pipelines requested from now on. Default: env WGT_WEBGPU_BIND_CACHE, else on for hardware
  // adapters, off for software ones (see docs/webgpu.md).
  bool bind_cache() const { return bind_cache_; }
  void set_bind_cache(bool on) { bind_cache_ = on; }

  // Profiling mode (default: env WGT_WEBGPU_PROFILE): every dispatch gets its own compute
  // pass with timestamp writes, and each flush waits for its batch to read the timestamps
  // back, so batches no longer overlap the host. Needs the timestamp-query feature:
  // set_profiling(true) throws Unsupported without it. Switching flushes the open batch.
  bool profiling() const { return profiling_; }
  void set_profiling(bool on);
  // Per-kernel GPU times since the last reset, sorted by total time (largest first). Flushes
  // the open batch first, so every dispatch recorded so far is counted.
  std::vector<KernelProfile> profile(bool reset);
  // The same from the host-side tallies only (no flush, no Dawn call): safe at process exit.
  std::vector<KernelProfile> profile_snapshot() const;
  void profile_reset();
  // Timed dispatches whose end timestamp preceded the begin one (the spec allows
  // non-monotonic timestamps); they are left out of the times.
  uint64_t profile_dropped() const { return profile_dropped_; }
  // Batch timing mode: each batch keeps its single compute pass (its dispatches run back to
  // back, as without timing) with a timestamp at the pass's beginning and end, and each
  // flush waits to read them. Per-dispatch profiling, when on, takes precedence. Needs
  // timestamp-query (Unsupported otherwise); switching flushes the open batch.
  bool batch_timing() const { return batch_timing_; }
  void set_batch_timing(bool on);
  // Totals since the last reset; flushes the open batch first.
  BatchTime batch_time(bool reset);

 private:
  struct Batch;
  void begin_batch();
  // A buffer copy recorded after the batch's compute pass, in the same command buffer.
  struct TailCopy {
    api::Buffer src;
    uint64_t src_off;
    api::Buffer dst;
    uint64_t size;
    bool status = false;  // also copy the status word to dst at offset `size`
  };
  void flush_with(const TailCopy* tail);
  // Maps the first `size` bytes of a MapRead buffer, waits, copies n bytes from `off` to dst
  // and unmaps; typed errors for a failed map. on_wait_error runs when the wait itself throws
  // (timeout, lost device), before the error propagates: the map may still be pending then.
  // With `last_word`, the mapped range's last 4 bytes (a status word copied behind the data)
  // are stored there too.
  void map_read(api::Buffer buf, size_t size, size_t off, void* dst, size_t n, const char* op,
                const std::function<void()>& on_wait_error, uint32_t* last_word = nullptr);
  void wait_idle(const char* op);
  // Sessions (webgpu_session.cpp). While one is open (session_depth_ > 0) the batch limit and
  // early submission are suspended, and every entry point that records or submits device work
  // (dispatch, write, read, flush, synchronize) refuses other threads with RuntimeState:
  // their work would land in the session's command buffer.
  void session_guard(const char* op) const {
    if (session_depth_ && std::this_thread::get_id() != session_owner_) refuse_other_thread(op);
  }
  [[noreturn]] void refuse_other_thread(const char* op) const;
  // A queue write inside a session with recorded dispatches: a queue write would land before
  // them, so the bytes go to a fresh staging buffer that the session's command buffer copies
  // into place, after the work recorded so far. False when the open batch cannot take the
  // copy (a profiled or timed batch: its passes carry timestamps), then the caller flushes.
  bool record_write(api::Buffer dst, size_t offset, const void* src, size_t nbytes);
  api::Buffer raw(const DeviceBuffer& b, const char* op) const;
  void drop_bind_groups();
  void ensure_query_set();
  void collect_timestamps(const Batch& b);
  void collect_batch_time(const Batch& b);
  void set_timing_mode(bool& mode, bool on, const char* what);
  uint32_t timed_capacity() const;

  // Bind groups of pipelines with a dynamic-offset params uniform, keyed by
  // (pipeline, params size, buffer handles and bound sizes): a steady-state program binds
  // the same few pooled buffers again and again. Cleared when the pool really frees a buffer
  // (a cached group would keep it alive) and when it grows past a bound.
  struct BindKeyHash {
    size_t operator()(const std::vector<uint64_t>& k) const;
  };
  std::unordered_map<std::vector<uint64_t>, api::BindGroup, BindKeyHash> bind_groups_;
  std::vector<uint64_t> bind_key_;  // scratch key (no allocation per lookup)
  uint64_t bind_generation_ = 0;
  bool bind_cache_ = true;

  std::unique_ptr<DawnDevice> dev_;
  std::unique_ptr<SubmissionQueue> in_flight_;
  int index_;
  uint64_t domain_;
  std::shared_ptr<BufferPool> pool_;
  KernelRegistry registry_;
  std::unordered_map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  // PipelineKey -> pipeline (an entry of pipelines_, so valid as long as this backend), one map
  // per layout mode (index: bind_cache_), since pipeline() keys on that mode too.
  struct PipelineKeyHash {
    size_t operator()(const PipelineKey& id) const;
  };
  std::unordered_map<PipelineKey, const Pipeline*, PipelineKeyHash> keyed_pipelines_[2];
  std::unique_ptr<Batch> batch_;
  uint64_t batch_serial_ = 1;
  uint32_t max_batch_ = 256;
  uint32_t early_batch_ = 8;
  std::thread::id session_owner_;
  uint32_t session_depth_ = 0;
  BatchStats stats_;
  api::Buffer arena_ = nullptr;
  size_t arena_capacity_ = 0;
  api::Buffer staging_ = nullptr;
  size_t staging_size_ = 0;
  api::Buffer sync_dst_ = nullptr;

  // Device status word (webgpu_status.cpp): bit k set by a kernel of op status_ops_[k].
  // status_armed_: a kernel that may set it ran since the word was last read back.
  void make_status();
  void check_status(uint32_t word, const char* op);  // throws OutOfRange when word != 0
  std::shared_ptr<BufferPool> status_pool_;
  std::shared_ptr<DeviceBuffer> status_;
  api::Buffer status_handle() const;
  std::vector<std::string> status_ops_;
  bool status_armed_ = false;

  // Profiling: one query set of 2 * timed_capacity() timestamps (begin, end per dispatch),
  // resolved into query_resolve_ and copied to query_read_ (MapRead) at each flush. One set
  // suffices because a profiled flush waits for its batch before the next one is recorded.
  struct KernelTally {
    uint64_t count = 0, total_ns = 0, min_ns = UINT64_MAX, max_ns = 0;
  };
  bool profiling_ = false;
  bool batch_timing_ = false;
  BatchTime batch_time_;
  api::QuerySet query_set_ = nullptr;
  uint32_t query_count_ = 0;
  api::Buffer query_resolve_ = nullptr, query_read_ = nullptr;
  std::unordered_map<const Pipeline*, KernelTally> tallies_;
  uint64_t profile_dropped_ = 0;
};

// WGT_WEBGPU_PROFILE=1: the backend registers itself so its kernel table is printed to
// stderr at process exit (host-side tallies only: no Dawn call at exit), and unregisters in
// its destructor. Implemented in webgpu_profile.cpp.
void print_profile_at_exit(const WebGPUBackend* b);
void forget_profile_at_exit(const WebGPUBackend* b);

}  // namespace wgt::webgpu
