// The runtime: owns the backends, applies the execution policy to every op call, and keeps
// the observable record of its decisions.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt {

enum class CpuMode { Reference, Fast };
enum class PolicyMode { Auto, GpuStrict, CpuOnly };

struct Policy {
  PolicyMode mode = PolicyMode::Auto;
  CpuMode cpu_mode = CpuMode::Fast;
  bool allow_fallback = true;  // Auto: run on CPU when WebGPU cannot
  // Load threshold: calls whose inputs are all on the host and whose estimated work is below
  // this run on CPU (in elementwise-equivalent operations).
  double min_gpu_work = 1 << 16;
  // Device-memory budget in bytes; 0 = default (90% of the adapter's reported heap, else 4 GiB).
  // Placement honours it: under auto, an op on host inputs whose device working set does not
  // fit next to the pinned (unevictable) bytes runs on the CPU (docs/architecture.md, "Memory and residency").
  uint64_t memory_budget = 0;
  bool trace = false;  // print one line per decision to stderr
};

// `base` with WGT_POLICY, WGT_CPU_MODE, WGT_FALLBACK, WGT_MIN_GPU_WORK, WGT_MEMORY_BUDGET and WGT_TRACE
// applied where set, as parsed at the first use of the library (README "Tuning and observing").
Policy policy_from_env(Policy base = {});

struct OpDecision {
  std::string op;
  std::string backend;  // backend that ran it
  std::string reason;   // why that backend
  bool fallback = false;
};

struct OpCounters {
  uint64_t calls = 0;
  uint64_t fallbacks = 0;
  uint64_t bytes_uploaded = 0;
  uint64_t bytes_downloaded = 0;
  uint64_t evictions = 0;
  double seconds = 0;  // host-side time spent dispatching (device work is asynchronous)
  std::string last_reason;
};

struct MemoryStats {
  uint64_t budget = 0;           // bytes the runtime may hold on the device
  uint64_t resident = 0;         // bytes of tensors resident on the device
  uint64_t pinned = 0;           // of which pinned
  uint64_t allocated = 0;        // everything the backend holds (tensors + pool + scratch)
  uint64_t pooled = 0;           // free buffers kept for reuse (released under pressure)
  uint64_t evicted_tensors = 0;  // storages currently evicted to host
};

struct RuntimeStats {
  std::map<std::string, std::map<std::string, OpCounters>> per_op;  // op -> backend -> counters
  uint64_t bytes_uploaded = 0;
  uint64_t bytes_downloaded = 0;
  uint64_t evictions = 0;
  uint64_t fallbacks = 0;
};

struct OutSpec {
  Shape shape;
  DType dtype;
};

// While alive, the calling thread's ops whose inputs are all on the host run on the CPU under
// policy auto, whatever their work: the load threshold no longer sends them to WebGPU. Why: a
// large op on host tensors is offloaded with its inputs uploaded for that one call, which for
// a language model on the CPU meant uploading every weight on every forward, and on a software
// adapter (lavapipe) running on the very cores the CPU kernels would use. LanguageModel holds
// one around the work of a model loaded on the CPU. Nestable; other threads are unaffected;
// ops with device inputs and policy gpu-strict decide as before. `on` false: no effect (for a
// scope that applies only sometimes, e.g. KeepHostOpsOnCpu keep(device.is_cpu())).
class KeepHostOpsOnCpu {
 public:
  explicit KeepHostOpsOnCpu(bool on = true);
  ~KeepHostOpsOnCpu();
  KeepHostOpsOnCpu(const KeepHostOpsOnCpu&) = delete;
  KeepHostOpsOnCpu& operator=(const KeepHostOpsOnCpu&) = delete;
  static bool active();  // on the calling thread

 private:
  bool on_;
};

// Threads. Ops may be called from any thread. The runtime has one lock (recursive: an op may
// run other ops); run() and every public method below that touches shared state take it, so
// the policy, the stats, the trace log, the residency bookkeeping and the device backends are
// only ever used by one thread at a time. Device work is therefore serialized per process; a
// call that runs on the CPU at the outermost level drops the lock while its kernel runs, so
// CPU ops of several threads run concurrently. Tensors may be shared read-only between
// threads (reading one from several threads, including item() / cpu() of a device tensor,
// is safe); writing a tensor (in-place ops, KVCache) while another thread uses it is a data
// race of the caller's, as for any C++ object. Accessors return copies (stats(),
// trace_log(), policy()); last_decision() is per thread: the decision of the calling
// thread's latest op. Code that composes backend calls itself (in-place ops, caches) holds
// lock() for the whole composition.
class Runtime {
 public:
  static Runtime& get();

  // The runtime lock (see "Threads" above; docs/architecture.md).
  [[nodiscard]] std::unique_lock<std::recursive_mutex> lock() const { return std::unique_lock<std::recursive_mutex>(mu_); }

  Policy policy() const { auto l = lock(); return policy_; }
  void set_policy(const Policy& p) { auto l = lock(); policy_ = p; }

  Backend& cpu_backend(CpuMode mode);
  Backend& cpu_backend() { return cpu_backend(policy().cpu_mode); }
  // nullptr when WebGPU (or that adapter index) is unavailable; `why` gets the reason.
  DeviceBackend* webgpu_backend(int index = 0, std::string* why = nullptr);
  // The device backends created so far (none probed): e.g. to find one by its identity.
  std::vector<DeviceBackend*> device_backends() const;
  // Registers a device backend made outside the providers (BackendHandle::from_dawn) after
  // the probed ones: make(i) builds the backend of Device::webgpu(i).
  DeviceBackend& add_device_backend(const std::function<std::unique_ptr<DeviceBackend>(int index)>& make);
  DeviceBackend& device_backend(Device d, const char* op);  // throws Unsupported if unavailable

  // Runs `call` whose results should live on `target`; allocates call.outputs from `outs`.
  // An in-place call (call.mutates) must pass the device of the tensors it writes as target;
  // when that device may not or cannot run it (policy cpu-only; a refusal with fallback
  // allowed), the CPU writes host copies of the written spans, which go back to the device
  // (recorded as backend "host-write").
  std::vector<Tensor> run(OpCall& call, const std::vector<OutSpec>& outs, Device target);
  // The same when the call would run on `target`'s device backend itself (a device target,
  // a policy other than cpu-only, the backend supports the call); otherwise nothing runs or is
  // recorded and the result is empty: for callers that have a composition of other ops to
  // run instead of a fused call (KVCache). The capability check is made once, here.
  std::optional<std::vector<Tensor>> run_on_device(OpCall& call, const std::vector<OutSpec>& outs, Device target);
  // (moved out of the temporary result vector: a copy would copy its shape and strides)
  Tensor run1(OpCall& call, const OutSpec& out, Device target) { return std::move(run(call, {out}, target)[0]); }

  // Transfers, counted in stats.
  void upload(Storage& s);     // host bytes -> (new) device buffer; keeps host copy dropped
  void download(Storage& s);   // device buffer -> host bytes (buffer kept)
  // Reads bytes of a device storage (resident or evicted) into host memory; waits.
  void read_bytes(Storage& s, size_t offset, void* dst, size_t nbytes);
  // Writes host bytes into a storage (resident: a device write ordered after the ops issued
  // before; evicted or host: its host bytes); counted as uploaded when it goes to a device.
  void write_bytes(Storage& s, size_t offset, const void* src, size_t nbytes);
  // Reads a strided device view densely (row-major) into dst of t.nbytes(): its span is
  // gathered on the host, or the view is compacted on its device first when the span is
  // much larger than the view (and the policy lets the device run the copy).
  void read_strided(const Tensor& t, void* dst);
  // Waits until every op so far has run on the devices. Not needed for correctness (reads
  // wait for what they read) nor for memory: device work in flight is bounded (back-pressure:
  // past the bounds of wgt/webgpu_info.hpp set_webgpu_max_in_flight an op waits for the
  // oldest submission), and every wait applies WGT_WEBGPU_TIMEOUT_MS to one submission, so
  // a long queue on a busy device never times out; a device that stops progressing does.
  void synchronize();

  // ---- residency (device-memory budget, LRU eviction, pinning) ----
  // Pinned storage is never evicted; pinning an evicted tensor re-uploads it. Pins are counted
  // per storage (views share it): a storage stays pinned until every pin() has had its
  // unpin(); unpin() of a storage that is not pinned throws InvalidArgument.
  void pin(const Tensor& t);
  void unpin(const Tensor& t);
  bool is_resident(const Tensor& t) const;
  uint64_t memory_budget(int device_index = 0);
  MemoryStats memory_stats(int device_index = 0);
  // Makes room for `nbytes` more on the device, evicting unpinned LRU storages not used by
  // the op in flight; throws OutOfMemory when pinned/in-use data leaves too little room.
  void ensure_room(Device d, uint64_t nbytes, const char* op);

  // The decision of the calling thread's latest op (per thread: another thread's ops do not
  // overwrite it).
  const OpDecision& last_decision() const;
  // Snapshots (copies): the live record changes under other threads' ops.
  std::vector<OpDecision> trace_log() const { auto l = lock(); return log_; }
  void set_record_log(bool on) { auto l = lock(); record_log_ = on; if (!on) log_.clear(); }
  RuntimeStats stats() const { auto l = lock(); return stats_; }
  void reset_stats() { auto l = lock(); stats_ = {}; log_.clear(); }

 private:
  bool run_impl(OpCall& call, const std::vector<OutSpec>& outs, Device target, bool device_only,
                std::vector<Tensor>& results);
  // The host round trip of an in-place call on device tensors (runtime/host_spans.cpp);
  // returns the outputs, on the host.
  std::vector<Tensor> run_written_on_host(OpCall& call, Backend& cpu, const std::vector<OutSpec>& outs);
  void record(const OpCall& call, const std::string& backend, const std::string& reason, bool fallback, uint64_t up,
              uint64_t down, uint64_t evicted, std::chrono::steady_clock::time_point t0);
  Runtime();
  ~Runtime();  // never run (get()); declared so that the registry's type may stay incomplete here
  mutable std::recursive_mutex mu_;
  Policy policy_;
  std::unique_ptr<class BackendRegistry> backends_;  // runtime/backend_registry.hpp
  std::vector<OpDecision> log_;
  bool record_log_ = false;
  RuntimeStats stats_;
  struct Resident {
    std::weak_ptr<Storage> storage;
    uint64_t bytes;
  };
  std::vector<Resident> residents_;  // device storages that were uploaded (pruned lazily)
  // Sum of residents_[i].bytes (dead, evicted and other-device entries included): an upper
  // bound of the resident bytes of any device, so ensure_room can skip its walk over residents_
  // when even this bound fits the budget. Recomputed at every prune.
  uint64_t tracked_bytes_ = 0;
  size_t prune_at_ = 1024;  // track() prunes dead entries when residents_ reaches this size
  uint64_t tick_ = 0;                // LRU clock, advanced at every touch
  uint64_t protect_from_ = UINT64_MAX;  // storages touched at or after this tick are in use
  struct InFlight {  // marks the span of one op call (nests: the outermost call wins)
    explicit InFlight(Runtime& r) : rt(r), saved(r.protect_from_) { rt.protect_from_ = std::min(saved, rt.tick_ + 1); }
    ~InFlight() { rt.protect_from_ = saved; }
    Runtime& rt;
    uint64_t saved;
  };
  void track(Storage& s);
  void prune_residents();  // drops dead entries, recomputes tracked_bytes_
  void make_resident(Storage& s, const char* op);
  // ensure_room without the error: false when the room could not be made.
  bool make_room(Device d, uint64_t nbytes, const char* op);
  // Device bytes eviction cannot free: pinned storages plus what the backend holds besides
  // tensors and its free pool.
  uint64_t unevictable_bytes(Device d);
  // Whether the call's device working set fits the budget next to the pinned bytes; `why`
  // gets the reason when not.
  bool fits_device(const OpCall& call, const std::vector<OutSpec>& outs, Device d, std::string* why);
};

// Free-function forms of the pinning API.
inline void pin(const Tensor& t) { Runtime::get().pin(t); }
inline void unpin(const Tensor& t) { Runtime::get().unpin(t); }

// Convenience.
bool webgpu_available(std::string* why = nullptr);
void synchronize();

}  // namespace wgt
