// Runtime: backend ownership, the execution policy applied to each op call, transfers, stats.
#include "wgt/runtime.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "cpu/cpu_backend.hpp"
#include "runtime/backend_registry.hpp"
#include "runtime/host_profile.hpp"
#include "runtime/host_spans.hpp"
#include "runtime/settings.hpp"
#include "webgpu/webgpu_factory.hpp"
#include "wgt/wgt.hpp"

namespace wgt {

const char* version() { return "0.1.0"; }

Policy policy_from_env(Policy p) {
  const Settings& s = settings();
  if (*s.policy) p.mode = **s.policy;
  if (*s.cpu_mode) p.cpu_mode = **s.cpu_mode;
  if (*s.fallback) p.allow_fallback = **s.fallback;
  if (*s.min_gpu_work) p.min_gpu_work = static_cast<double>(**s.min_gpu_work);
  if (*s.memory_budget) p.memory_budget = **s.memory_budget;
  if (*s.trace) p.trace = **s.trace;
  return p;
}

Runtime& Runtime::get() {
  // Never destroyed: at process exit GPU drivers tear themselves down through their own atexit
  // handlers, in an order we do not control; releasing Dawn objects after that crashed on the
  // NVIDIA driver. The OS reclaims everything at exit.
  static Runtime* rt = new Runtime();
  return *rt;
}

Runtime::Runtime() {
  // The first use of the library: every WGT_* variable is parsed here, and a bad one is an
  // InvalidArgument error naming it before anything runs (runtime/settings.hpp).
  const Settings& s = settings();
  policy_ = policy_from_env();
  if (*s.host_profile) hostprof::enable_from_env();
  backends_ = std::make_unique<BackendRegistry>();
  backends_->add_cpu(CpuMode::Reference, make_cpu_backend(CpuMode::Reference));
  backends_->add_cpu(CpuMode::Fast, make_cpu_backend(CpuMode::Fast));
  backends_->add_provider(&create_webgpu_backends);  // probed at the first device lookup
}

Runtime::~Runtime() = default;

namespace {
// Runtime::last_decision() is per thread: "the decision of my latest op" is what a caller
// asks for, and another thread's ops must not overwrite it between the op and the question.
// One runtime per process, so one per-thread slot suffices.
thread_local OpDecision t_last_decision;
thread_local int t_keep_host_ops = 0;  // depth of KeepHostOpsOnCpu scopes on this thread
}  // namespace

KeepHostOpsOnCpu::KeepHostOpsOnCpu(bool on) : on_(on) { t_keep_host_ops += on_; }
KeepHostOpsOnCpu::~KeepHostOpsOnCpu() { t_keep_host_ops -= on_; }
bool KeepHostOpsOnCpu::active() { return t_keep_host_ops > 0; }

const OpDecision& Runtime::last_decision() const { return t_last_decision; }

Backend& Runtime::cpu_backend(CpuMode mode) { return backends_->cpu(mode); }

DeviceBackend* Runtime::webgpu_backend(int index, std::string* why) {
  auto lk = lock();  // the first call probes and creates the devices
  return backends_->device(index, why);
}

std::vector<DeviceBackend*> Runtime::device_backends() const {
  auto lk = lock();
  std::vector<DeviceBackend*> out;
  for (const auto& b : backends_->devices()) out.push_back(b.get());
  return out;
}

DeviceBackend& Runtime::add_device_backend(const std::function<std::unique_ptr<DeviceBackend>(int index)>& make) {
  auto lk = lock();
  (void)backends_->device(0, nullptr);  // the providers' backends come first
  const int index = static_cast<int>(backends_->devices().size());
  std::unique_ptr<DeviceBackend> b = make(index);
  DeviceBackend& ref = *b;
  backends_->add_device(std::move(b));
  return ref;
}

DeviceBackend& Runtime::device_backend(Device d, const char* op) {
  if (d.is_cpu()) throw_error(ErrorKind::InvalidArgument, op, "cpu is not a device backend");
  std::string why;
  DeviceBackend* b = webgpu_backend(d.index, &why);
  if (!b) throw_error(ErrorKind::Unsupported, op, d.str() + " is not available: " + why);
  return *b;
}

bool webgpu_available(std::string* why) { return Runtime::get().webgpu_backend(0, why) != nullptr; }
void synchronize() { Runtime::get().synchronize(); }

void Runtime::synchronize() {
  auto lk = lock();
  for (auto& b : backends_->devices()) b->synchronize();
}

void Runtime::upload(Storage& s) {
  auto lk = lock();
  DeviceBackend& b = device_backend(s.device(), "upload");
  if (!s.resident()) ensure_room(s.device(), s.nbytes(), "upload");
  auto buf = b.allocate(s.nbytes());
  if (!s.tracked()) track(s);
  if (s.has_host() && s.nbytes()) {
    b.write(*buf, 0, s.host_data(), s.nbytes());
    stats_.bytes_uploaded += s.nbytes();
  }
  s.touch(++tick_);
  s.set_buffer(std::move(buf));
  s.drop_host();
}

void Runtime::download(Storage& s) {
  auto lk = lock();
  if (!s.resident()) return;
  DeviceBackend& b = device_backend(s.device(), "download");
  s.ensure_host();
  if (s.nbytes()) b.read(*s.buffer(), 0, s.host_data(), s.nbytes());
  stats_.bytes_downloaded += s.nbytes();
}

void Runtime::read_bytes(Storage& s, size_t offset, void* dst, size_t nbytes) {
  if (offset > s.nbytes() || nbytes > s.nbytes() - offset)
    throw_error(ErrorKind::OutOfRange, "read_bytes", "range exceeds storage of " + std::to_string(s.nbytes()) + " bytes");
  if (nbytes == 0) return;
  auto lk = lock();  // residency and the device's read path
  if (s.map_writer() && !s.device().is_cpu())
    throw_error(ErrorKind::RuntimeState, "download",
                "the tensor is mapped for writing (wgt::map_write): its device bytes are stale until unmap()");
  if (s.resident()) {
    DeviceBackend& b = device_backend(s.device(), "download");
    {  // The read goes through a staging buffer of nbytes: room is made for it where the
       // budget allows, but a read never fails for budget reasons (the staging buffer is
       // transient and no tensor: the data must always be readable back).
      InFlight guard(*this);
      s.touch(++tick_);
      (void)make_room(s.device(), nbytes, "download");
    }
    if (!s.resident()) throw_error(ErrorKind::RuntimeState, "download", "storage evicted during its own read");
    b.read(*s.buffer(), offset, dst, nbytes);
    stats_.bytes_downloaded += nbytes;
  } else if (s.has_host()) {
    std::memcpy(dst, s.host_data() + offset, nbytes);
  } else {
    throw_error(ErrorKind::RuntimeState, "read_bytes", "storage has neither a device buffer nor host bytes");
  }
}

void Runtime::write_bytes(Storage& s, size_t offset, const void* src, size_t nbytes) {
  if (offset > s.nbytes() || nbytes > s.nbytes() - offset)
    throw_error(ErrorKind::OutOfRange, "write_bytes", "range exceeds storage of " + std::to_string(s.nbytes()) + " bytes");
  if (nbytes == 0) return;
  auto lk = lock();
  if (s.resident()) {
    // write() submits the recorded batch first (or, inside a Session, records the copy after
    // it), so the bytes land after every op issued before and before every later one.
    device_backend(s.device(), "upload").write(*s.buffer(), offset, src, nbytes);
    stats_.bytes_uploaded += nbytes;
  } else if (s.has_host()) {
    std::memcpy(s.host_data() + offset, src, nbytes);  // a host or evicted storage: its host bytes are the data
  } else {
    throw_error(ErrorKind::RuntimeState, "write_bytes", "storage has neither a device buffer nor host bytes");
  }
}

// Mapped tensors (wgt/mapping.hpp): an op may read a read-mapped tensor, never a write-mapped
// one (its bytes are not written back yet), and writes no mapped tensor in place (the view
// would change under its reader, or the write-back would undo the op).
static void check_mappings(const OpCall& call) {
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& in = call.inputs[i];
    if (!in.defined() || !in.storage()->mapped()) continue;
    const bool written = i < 32 && (call.mutates & (1u << i));
    if (in.storage()->map_writer() || written)
      throw_error(ErrorKind::RuntimeState, call.name,
                  describe(call) + ": input " + std::to_string(i) + " is mapped for " +
                      (in.storage()->map_writer() ? "writing" : "reading") + " (wgt::map_" +
                      (in.storage()->map_writer() ? "write" : "read") + ") and " +
                      (written ? "would be written in place" : "its bytes are not written back yet") +
                      "; unmap() it first");
  }
}

// "inputs resident on webgpu:N", built once per device index (the common GPU decision).
// (Called under the runtime lock.)
static const std::string& resident_reason(Device target) {
  static std::vector<std::string> cache;
  const size_t i = static_cast<size_t>(target.index);
  while (cache.size() <= i) cache.push_back("inputs resident on " + Device::webgpu(static_cast<int>(cache.size())).str());
  return cache[i];
}

std::string describe(const OpCall& call) {
  std::string s = call.name + "(";
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (i) s += ", ";
    s += call.inputs[i].defined() ? std::string(dtype_name(call.inputs[i].dtype())) + shape_str(call.inputs[i].shape()) : "none";
  }
  return s + ")";
}

bool Runtime::fits_device(const OpCall& call, const std::vector<OutSpec>& outs, Device d, std::string* why) {
  // The op's device working set: its outputs plus every input not already resident there.
  uint64_t need = 0;
  for (const auto& o : outs) need += static_cast<uint64_t>(checked_numel(o.shape)) * dtype_size(o.dtype);
  for (const auto& in : call.inputs) {
    if (!in.defined()) continue;
    if (in.device() == d && in.storage()->resident()) continue;
    need += in.device() == d ? in.storage()->nbytes() : in.nbytes();  // to() uploads the compacted view
  }
  const uint64_t budget = memory_budget(d.index);
  // Fast path without the walk: tracked_bytes_ bounds the pinned bytes from above, and the
  // backend's allocation bounds what it holds besides.
  if (DeviceBackend* b = webgpu_backend(d.index); b && need + std::max(tracked_bytes_, b->bytes_allocated()) <= budget)
    return true;
  const uint64_t held = unevictable_bytes(d);
  if (held <= budget && need <= budget - held) return true;
  *why = "device working set of " + std::to_string(need) + " bytes does not fit the memory budget of " +
         std::to_string(budget) + " bytes next to " + std::to_string(held) + " bytes pinned or held by the backend";
  return false;
}

std::vector<Tensor> Runtime::run(OpCall& call, const std::vector<OutSpec>& outs, Device target) {
  std::vector<Tensor> results;
  run_impl(call, outs, target, false, results);
  return results;
}

std::optional<std::vector<Tensor>> Runtime::run_on_device(OpCall& call, const std::vector<OutSpec>& outs, Device target) {
  std::vector<Tensor> results;
  if (!run_impl(call, outs, target, true, results)) return std::nullopt;
  return results;
}

bool Runtime::run_impl(OpCall& call, const std::vector<OutSpec>& outs, Device target, bool device_only,
                       std::vector<Tensor>& results) {
  hostprof::Scope prof_op(hostprof::OpTotal);
  auto lk = lock();
  auto t0 = std::chrono::steady_clock::now();
  std::optional<hostprof::Scope> prof_stage(std::in_place, hostprof::Choose);
  Backend* chosen = nullptr;
  // Why `chosen` runs it: the common device case points at a cached string (no copy per
  // call); the other cases build their text in reason_text.
  std::string reason_text;
  const std::string* reason = &reason_text;
  bool fallback = false;
  // A device tensor written in place whose device cannot (or may not) run the call: the CPU
  // kernel runs on host copies of the written spans, which are written back (run_written_on_host).
  bool host_round_trip = false;
  Backend& cpu = cpu_backend();
  call.plan.reset();  // a plan of an earlier run of this OpCall is not this run's
  call.plan_by = nullptr;
  call.out_specs.clear();
  for (const auto& o : outs) call.out_specs.emplace_back(o.shape, o.dtype);
  // Capability checks see the outputs' shapes and dtypes through storage-less placeholders.
  call.outputs.clear();
  for (const auto& o : outs) {
    int64_t n = validate_shape(o.shape, call.name.c_str());
    call.outputs.emplace_back(Storage::meta(static_cast<size_t>(n) * dtype_size(o.dtype), target), o.shape,
                              contiguous_strides(o.shape), 0, o.dtype);
  }
  // An in-place op runs where the tensors it writes live: moving one would write a copy.
  bool writes_host = false, writes_device = false;
  for (size_t i = 0; i < call.inputs.size() && i < 32; ++i) {
    if (!(call.mutates & (1u << i))) continue;
    const Tensor& w = call.inputs[i];
    if (!w.defined() || w.device() != target)
      throw_error(ErrorKind::InvalidArgument, call.name,
                  describe(call) + ": the tensor written in place must be defined and live on " + target.str());
    (w.device().is_cpu() ? writes_host : writes_device) = true;
  }
  check_mappings(call);
  auto refuse = [&](const std::string& why) {
    // The advice depends on what could have run it: gpu-strict forbids the CPU whatever the
    // inputs' device; otherwise the fallback is the switch, and moving device inputs to the host.
    std::string advice;
    if (policy_.mode == PolicyMode::GpuStrict)
      advice = "; policy gpu-strict runs every op on WebGPU: use policy auto to let the CPU run it";
    else if (writes_device)
      advice = "; allow the fallback (Policy::allow_fallback / WGT_FALLBACK=1) to write it through the host";
    else if (target.is_webgpu())
      advice = "; allow the fallback (Policy::allow_fallback / WGT_FALLBACK=1), or move the inputs to cpu";
    else
      advice = "; allow the fallback (Policy::allow_fallback / WGT_FALLBACK=1) to run it on the CPU";
    throw_error(ErrorKind::Unsupported, call.name, describe(call) + why + advice);
  };
  if (device_only && (!target.is_webgpu() || writes_host || policy_.mode == PolicyMode::CpuOnly)) return false;
  if (writes_host) {
    chosen = &cpu;
    reason_text = "in-place on a host tensor";
  } else if (writes_device && policy_.mode == PolicyMode::CpuOnly) {
    chosen = &cpu;
    host_round_trip = true;
    reason_text = "policy cpu-only";
  } else if (policy_.mode == PolicyMode::CpuOnly) {
    chosen = &cpu;
    reason_text = "policy cpu-only";
  } else {
    std::string why;
    // Host ops kept on the CPU do not even probe for an adapter.
    const bool keep_host = t_keep_host_ops > 0 && !target.is_webgpu() && policy_.mode != PolicyMode::GpuStrict;
    DeviceBackend* gpu = keep_host ? nullptr : webgpu_backend(target.is_webgpu() ? target.index : 0, &why);
    bool want_gpu = target.is_webgpu() || policy_.mode == PolicyMode::GpuStrict ||
                    (gpu && call.work >= policy_.min_gpu_work);
    if (!want_gpu) {
      chosen = &cpu;
      static const std::string kKept = "inputs on host, kept on the CPU (KeepHostOpsOnCpu)";
      if (keep_host) reason = &kKept;  // a CPU model's every op: no string built per call
      else reason_text = "inputs on host, work " + std::to_string(static_cast<long long>(call.work)) + " below threshold";
    } else if (!gpu) {
      if (device_only) return false;
      if (policy_.mode == PolicyMode::GpuStrict || writes_device || (target.is_webgpu() && !policy_.allow_fallback))
        throw_error(ErrorKind::Unsupported, call.name, describe(call) + ": webgpu unavailable: " + why);
      chosen = &cpu;
      reason_text = "webgpu unavailable: " + why;
      fallback = target.is_webgpu();
    } else if (!target.is_webgpu() && policy_.mode == PolicyMode::Auto &&
               !fits_device(call, outs, gpu->device(), &reason_text)) {
      // Host inputs: the CPU is as valid a choice as the device, and the budget must never
      // make a program fail that the CPU could run.
      chosen = &cpu;
    } else if (Support s = gpu->supports(call); s.ok) {
      chosen = gpu;
      call.plan = std::move(s.plan);  // handed to execute: the kernel is chosen once per call
      call.plan_by = gpu;
      if (target.is_webgpu()) reason = &resident_reason(target);
      else reason_text = "work above threshold";
    } else {
      if (device_only) return false;
      if (policy_.mode == PolicyMode::GpuStrict || !policy_.allow_fallback)
        refuse(" not supported on " + gpu->name() + ": " + s.reason);
      chosen = &cpu;
      host_round_trip = writes_device;
      reason_text = "fallback: " + s.reason;
      fallback = true;
    }
  }
  if (device_only && chosen == &cpu) return false;
  if (chosen == &cpu) {
    if (Support s = cpu.supports(call); !s.ok)
      throw_error(ErrorKind::Unsupported, call.name, describe(call) + " not supported on " + cpu.name() + ": " + s.reason);
  }
  const Device dev = chosen->device();
  if (host_round_trip) {
    InFlight guard(*this);
    const uint64_t up0 = stats_.bytes_uploaded, down0 = stats_.bytes_downloaded, evict0 = stats_.evictions;
    results = run_written_on_host(call, cpu, outs);
    for (auto& r : results) r = r.to(target);
    record(call, "host-write", *reason, fallback, stats_.bytes_uploaded - up0, stats_.bytes_downloaded - down0,
           stats_.evictions - evict0, t0);
    return true;
  }
  prof_stage.emplace(hostprof::Inputs);
  // Everything touched from here on is in use by this op and never evicted for it.
  std::optional<InFlight> guard(std::in_place, *this);
  // This op's transfers and evictions: the global counters diffed over the spans in which
  // this thread holds the lock (only the scalars: copying stats_ would deep-copy the map).
  uint64_t up = 0, down = 0, evicted = 0;
  uint64_t up0 = stats_.bytes_uploaded, down0 = stats_.bytes_downloaded, evict0 = stats_.evictions;
  auto count_span = [&] {
    up += stats_.bytes_uploaded - up0;
    down += stats_.bytes_downloaded - down0;
    evicted += stats_.evictions - evict0;
  };
  for (auto& in : call.inputs)
    if (in.defined() && in.device() == dev && dev.is_webgpu()) in.storage()->touch(++tick_);
  for (auto& in : call.inputs) {
    if (!in.defined()) continue;
    if (in.device() != dev) {
      in = dev.is_cpu() ? to_host_span(*this, in) : in.to(dev);
      // The plan saw the input where it was (a moved view may be compacted): plan again.
      call.plan.reset();
      call.plan_by = nullptr;
    } else if (dev.is_webgpu()) {
      make_resident(*in.storage(), call.name.c_str());
    }
  }
  if (dev.is_webgpu()) {
    uint64_t out_bytes = 0;
    for (const auto& o : outs) out_bytes += static_cast<uint64_t>(checked_numel(o.shape)) * dtype_size(o.dtype);
    ensure_room(dev, out_bytes, call.name.c_str());
  }
  prof_stage.emplace(hostprof::Outputs);
  call.outputs.clear();
  for (const auto& o : outs) call.outputs.push_back(Tensor::empty(o.shape, o.dtype, dev));
  prof_stage.emplace(hostprof::Execute);
  if (chosen == &cpu) {
    // A CPU kernel reads and writes host memory only (its inputs were moved to the host
    // above, its outputs are fresh): it runs without the lock, so CPU ops of several threads
    // run concurrently. The in-flight span ends first, so that the residency's protection
    // marks stay nested per lock holder (nothing of this op is on a device any more). When
    // an enclosing op holds the lock too, this releases one level only: that op's state is
    // untouched and no other thread enters.
    guard.reset();
    count_span();
    lk.unlock();
    chosen->execute(call);
    lk.lock();
    up0 = stats_.bytes_uploaded, down0 = stats_.bytes_downloaded, evict0 = stats_.evictions;
  } else {
    chosen->execute(call);
  }
  results = call.outputs;
  for (auto& r : results)
    if (r.device() != target) r = r.to(target);
  prof_stage.emplace(hostprof::Bookkeeping);
  count_span();
  record(call, chosen->name(), *reason, fallback, up, down, evicted, t0);
  return true;
}

void Runtime::record(const OpCall& call, const std::string& backend_name, const std::string& reason, bool fallback,
                     uint64_t up, uint64_t down, uint64_t evicted, std::chrono::steady_clock::time_point t0) {
  // Assigned field by field: the strings reuse their capacity (no allocation per op).
  OpDecision& last = t_last_decision;
  last.op = call.name;
  last.backend = backend_name;
  last.reason = reason;
  last.fallback = fallback;
  auto& c = stats_.per_op[call.name][backend_name];
  c.calls++;
  c.bytes_uploaded += up;
  c.bytes_downloaded += down;
  c.evictions += evicted;
  c.last_reason = reason;
  if (fallback) { c.fallbacks++; stats_.fallbacks++; }
  c.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (record_log_) log_.push_back(last);
  if (policy_.trace)
    std::fprintf(stderr, "[wgt] %s -> %s (%s)\n", describe(call).c_str(), backend_name.c_str(), reason.c_str());
}

}  // namespace wgt
