// WebGPU backend: capability checks, kernel dispatch batching, pipelines, transfers.
#include "webgpu/webgpu_backend.hpp"

#include <algorithm>
#include <functional>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "runtime/host_profile.hpp"
#include "runtime/settings.hpp"
#include "webgpu/buffer_pool.hpp"
#include "webgpu/shader_registry.hpp"

namespace wgt::webgpu {

using namespace api;

class Pipeline {
 public:
  ComputePipeline pipeline = nullptr;
  BindGroupLayout layout = nullptr;
  PipelineLayout pipeline_layout = nullptr;  // explicit layout, or null (automatic layout)
  uint32_t bindings = 0;                     // explicit layout: storage bindings + the params uniform
  std::string key;
  std::string name;  // ShaderVariant::key() (the cache key less its layout-mode suffix): profile label
};

// The open batch: one command encoder with one compute pass, plus the params arena bytes.
// A profiled batch instead opens one pass per dispatch (pass timestamps are the only
// timestamps core WebGPU offers) and remembers which pipeline each timed pass ran.
struct WebGPUBackend::Batch {
  CommandEncoder encoder = nullptr;
  ComputePassEncoder pass = nullptr;  // null between dispatches of a profiled batch
  std::vector<uint8_t> arena;  // params of this batch, slots aligned to the uniform alignment
  uint32_t dispatches = 0;
  const Pipeline* last_pipeline = nullptr;  // SetPipeline only when it changes
  bool profiled = false;
  bool pass_timed = false;  // batch timing: its one pass writes timestamps 0 (begin) and 1 (end)
  std::vector<const Pipeline*> timed;  // timed[i] wrote timestamps 2i (begin) and 2i+1 (end)
};

namespace {

constexpr size_t kArenaBytes = 256 * 1024;
constexpr size_t kMaxBindGroups = 4096;  // cached bind groups before the cache is reset
// Timed dispatches per profiled batch at most: the WebGPU spec caps a query set at 4096
// queries, two per dispatch.
constexpr uint32_t kMaxTimedPerBatch = 2048;

uint64_t new_domain() {
  // Unique per backend instance and per process: a foreign buffer is never mistaken for ours.
  static std::atomic<uint64_t> counter{0};
  return (static_cast<uint64_t>(::getpid()) << 32) ^ 0x5747'0000ull ^ ++counter;
}

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

Buffer create_buffer(const DawnDevice& d, Flags usage, uint64_t size, const char* what) {
  BufferDescriptor desc;
  desc.usage = usage;
  desc.size = size;
  d.push_scope(ErrorFilter::OutOfMemory);
  Buffer b = d.p().DeviceCreateBuffer(d.handle(), &desc);
  std::string err = d.pop_scope();
  if (!b || !err.empty())
    throw_error(ErrorKind::OutOfMemory, what, "could not create a " + std::to_string(size) + "-byte buffer: " + err);
  return b;
}

// The @group(0) bindings of a kernel, when they follow the convention of context.hpp that an
// explicit layout with a dynamic-offset params uniform needs: storage buffers 0..n-1, then
// one uniform at n. Anything else (no params, textures, other groups) returns {} and the
// pipeline keeps the automatic layout with one bind group per dispatch.
std::vector<BufferBindingType> explicit_bindings(const std::string& src) {
  std::vector<std::pair<uint32_t, BufferBindingType>> found;
  auto skip_ws = [&](size_t i) {
    while (i < src.size() && std::isspace(static_cast<unsigned char>(src[i]))) ++i;
    return i;
  };
  auto number = [&](size_t& i, uint32_t& out) {
    size_t j = i;
    out = 0;
    while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) out = out * 10 + (src[j++] - '0');
    const bool ok = j > i && j < src.size() && src[j] == ')';
    i = j + 1;
    return ok;
  };
  for (size_t at = src.find("@group("); at != std::string::npos; at = src.find("@group(", at + 1)) {
    size_t i = at + 7;
    uint32_t group = 0, binding = 0;
    if (!number(i, group) || group != 0) return {};
    i = skip_ws(i);
    if (src.compare(i, 9, "@binding(") != 0) return {};
    i += 9;
    if (!number(i, binding)) return {};
    i = skip_ws(i);
    if (src.compare(i, 4, "var<") != 0) return {};  // textures/samplers: not handled here
    const size_t end = src.find('>', i);
    if (end == std::string::npos) return {};
    const std::string space = src.substr(i + 4, end - i - 4);
    BufferBindingType t;
    if (space.find("uniform") != std::string::npos) t = BufferBindingType::Uniform;
    else if (space.find("read_write") != std::string::npos) t = BufferBindingType::Storage;
    else if (space.find("storage") != std::string::npos) t = BufferBindingType::ReadOnlyStorage;
    else return {};
    found.emplace_back(binding, t);
  }
  std::sort(found.begin(), found.end());
  std::vector<BufferBindingType> out;
  for (size_t k = 0; k < found.size(); ++k) {
    if (found[k].first != k) return {};  // gaps or duplicates
    const bool last = k + 1 == found.size();
    if ((found[k].second == BufferBindingType::Uniform) != last) return {};
    out.push_back(found[k].second);
  }
  return out;
}

}  // namespace

size_t WebGPUBackend::BindKeyHash::operator()(const std::vector<uint64_t>& k) const {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  for (uint64_t v : k) h = (h ^ v) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

void WebGPUBackend::drop_bind_groups() {
  for (auto& [k, bg] : bind_groups_) dev_->p().BindGroupRelease(bg);
  bind_groups_.clear();
  bind_generation_ = pool_->generation();
}

WebGPUBackend::WebGPUBackend(DawnInstance& inst, size_t adapter_index, int device_index)
    : dev_(std::make_unique<DawnDevice>(inst, adapter_index)),
      in_flight_(std::make_unique<SubmissionQueue>(*dev_)),
      index_(device_index),
      domain_(new_domain()) {
  const Settings& s = settings();
  pool_ = std::make_shared<BufferPool>(*dev_, domain_, *s.webgpu_pool_limit);
  max_batch_ = *s.webgpu_batch;
  // Cached bind groups with a dynamic-offset params uniform: on by default on hardware
  // adapters. Off on software ones: lavapipe runs a dispatch with a dynamic uniform offset
  // about 2x slower (measured: ~30 -> ~60 us per tiny add), more than the host time saved.
  bind_cache_ = s.webgpu_bind_cache->value_or(!is_software());
  register_elementwise_kernels(registry_);
  register_reduce_kernels(registry_);
  register_matmul_kernels(registry_);
  register_index_kernels(registry_);
  register_nn_kernels(registry_);
  register_quant_kernels(registry_);
  arena_capacity_ = kArenaBytes;
  arena_ = create_buffer(*dev_, usage::Uniform | usage::CopyDst, arena_capacity_, "webgpu");
  make_status();
  sync_dst_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, 4, "webgpu");
  if (*s.webgpu_profile) {
    // An env switch should not take the device away: without the feature, say so and go on.
    if (features().timestamp_query) {
      set_profiling(true);
      print_profile_at_exit(this);
    } else {
      std::fprintf(stderr, "wgtensor: WGT_WEBGPU_PROFILE=1 ignored on %s (%s): the adapter lacks timestamp-query\n",
                   name().c_str(), dev_->desc().name.c_str());
    }
  }
}

WebGPUBackend::~WebGPUBackend() {
  try {
    flush();
  } catch (...) {
    // A lost device cannot flush; the buffers are released below either way.
  }
  forget_profile_at_exit(this);
  const Procs& p = dev_->p();
  batch_.reset();
  drop_bind_groups();
  status_.reset();
  if (status_pool_) status_pool_->detach();
  for (auto& [k, pl] : pipelines_) {
    p.BindGroupLayoutRelease(pl->layout);
    if (pl->pipeline_layout) p.PipelineLayoutRelease(pl->pipeline_layout);
    p.ComputePipelineRelease(pl->pipeline);
  }
  for (Buffer b : {arena_, staging_, sync_dst_, query_resolve_, query_read_})
    if (b) p.BufferRelease(b);
  if (query_set_) p.QuerySetRelease(query_set_);
  pool_->detach();  // tensors that outlive the backend release their handles directly
}

// ---- capability ----

Support WebGPUBackend::supports(const OpCall& call) const {
  // Copy, Concat, IndexSelect and Gather move bits of any element size (i64 indices are read
  // as u32 pairs) and argmax writes its i64 result as u32 pairs: their kernels judge dtypes.
  // Every other kernel computes in WGSL types. f16 is judged per kernel: packed f16 (u32
  // words + unpack2x16float) needs no shader-f16, only kernels with native f16 code do.
  const bool raw_in = call.kind == OpKind::Copy || call.kind == OpKind::Concat || call.kind == OpKind::IndexSelect ||
                      call.kind == OpKind::Gather;
  const bool raw_out = raw_in || (call.kind == OpKind::Reduce && call.attrs.reduce == ReduceOp::ArgMax);
  auto check_tensor = [&](const Tensor& t, bool raw) -> Support {
    if (!t.defined()) return Support::yes();
    switch (raw ? DType::F32 : t.dtype()) {
      case DType::I64: case DType::F64: case DType::C64:
        return Support::no(std::string("dtype ") + dtype_name(t.dtype()) + " has no WebGPU (WGSL) representation");
      default: break;
    }
    const uint64_t bytes = t.storage() ? t.storage()->nbytes() : t.nbytes();
    if (std::max<uint64_t>(bytes, t.nbytes()) > limits().max_storage_buffer_binding_size)
      return Support::no("tensor " + t.str() + " of " + std::to_string(bytes) +
                         " bytes exceeds maxStorageBufferBindingSize (" +
                         std::to_string(limits().max_storage_buffer_binding_size) + ")");
    return Support::yes();
  };
  for (const auto& t : call.inputs)
    if (Support s = check_tensor(t, raw_in); !s.ok) return s;
  for (const auto& t : call.outputs)
    if (Support s = check_tensor(t, raw_out); !s.ok) return s;
  for (const auto& [shape, dt] : call.out_specs) {
    if (!raw_out && (dt == DType::I64 || dt == DType::F64 || dt == DType::C64))
      return Support::no(std::string("output dtype ") + dtype_name(dt) + " has no WebGPU (WGSL) representation");
    uint64_t n = dtype_size(dt);
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    if (n > limits().max_storage_buffer_binding_size)
      return Support::no("output " + shape_str(shape) + " of " + std::to_string(n) +
                         " bytes exceeds maxStorageBufferBindingSize (" +
                         std::to_string(limits().max_storage_buffer_binding_size) + ")");
  }
  for (const auto& e : registry_.entries())
    if (e.kind == call.kind) return e.check(*this, call);
  return Support::no(std::string("no WebGPU kernel for op kind ") + op_kind_name(call.kind));
}

void WebGPUBackend::execute(OpCall& call) {
  dev_->check(call.name.c_str());
  for (const auto& e : registry_.entries())
    if (e.kind == call.kind) {
      if (Support s = e.check(*this, call); !s.ok)
        throw_error(ErrorKind::Unsupported, call.name, s.reason + " (on " + name() + ")");
      e.launch(*this, call);
      return;
    }
  throw_error(ErrorKind::Unsupported, call.name, std::string("no WebGPU kernel for op kind ") + op_kind_name(call.kind));
}

// ---- memory ----

std::shared_ptr<DeviceBuffer> WebGPUBackend::allocate(size_t nbytes) { return pool_->acquire(nbytes); }

PoolStats WebGPUBackend::pool_stats() const {
  return {pool_->allocated(), pool_->in_use(), pool_->pooled(), pool_->created(), pool_->reuses()};
}

void WebGPUBackend::release_pool() { pool_->clear(); }
void WebGPUBackend::release_cached() {
  pool_->clear();
  drop_bind_groups();  // cached bind groups would keep the freed buffers alive
  if (staging_) {  // the read staging buffer holds no data between reads
    dev_->p().BufferRelease(staging_);
    staging_ = nullptr;
    staging_size_ = 0;
  }
}
uint64_t WebGPUBackend::bytes_allocated() const { return pool_->allocated() + arena_capacity_ + staging_size_; }
uint64_t WebGPUBackend::bytes_pooled() const { return pool_->pooled(); }

Buffer WebGPUBackend::raw(const DeviceBuffer& b, const char* op) const {
  if (b.domain() != domain_)
    throw_error(ErrorKind::RuntimeState, op,
                "buffer belongs to another device/runtime (domain mismatch); move the tensor with .to(device)");
  return static_cast<const WebGPUBuffer&>(b).handle();
}

void WebGPUBackend::write(const DeviceBuffer& dst, size_t offset, const void* src, size_t nbytes) {
  Buffer buf = raw(dst, "write");
  if (offset + nbytes > dst.nbytes() || offset + nbytes < offset)
    throw_error(ErrorKind::OutOfRange, "write", "range [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                                                    ") exceeds the " + std::to_string(dst.nbytes()) + "-byte buffer");
  if (nbytes == 0) return;
  // Queue writes run before the batch still being recorded: submit it first so a recorded
  // kernel never sees data written "after" it.
  if (batch_ && batch_->dispatches) flush();
  const size_t begin = offset & ~size_t{3};
  const size_t end = round_up(offset + nbytes, 4);
  if (begin == offset && (end == offset + nbytes || offset + nbytes == dst.nbytes())) {
    const size_t main = nbytes & ~size_t{3};
    if (main) dev_->p().QueueWriteBuffer(dev_->queue(), buf, offset, src, main);
    if (main != nbytes) {
      uint8_t tail[4] = {0, 0, 0, 0};  // bytes past nbytes() are padding
      std::memcpy(tail, static_cast<const uint8_t*>(src) + main, nbytes - main);
      dev_->p().QueueWriteBuffer(dev_->queue(), buf, offset + main, tail, 4);
    }
    in_flight_->submitted(0, nbytes, "write");  // Dawn holds a staging copy until it ran
    return;
  }
  // Unaligned edges: read the boundary words, merge, write whole words (rare: views of u8/f16).
  std::vector<uint8_t> tmp(end - begin);
  const size_t avail = std::min(end, static_cast<const WebGPUBuffer&>(dst).capacity()) - begin;
  read(dst, begin, tmp.data(), std::min(avail, dst.nbytes() - begin));
  std::memcpy(tmp.data() + (offset - begin), src, nbytes);
  dev_->p().QueueWriteBuffer(dev_->queue(), buf, begin, tmp.data(), tmp.size());
  in_flight_->submitted(0, tmp.size(), "write");
}

void WebGPUBackend::read(const DeviceBuffer& src, size_t offset, void* dst, size_t nbytes) {
  Buffer buf = raw(src, "read");
  if (offset + nbytes > src.nbytes() || offset + nbytes < offset)
    throw_error(ErrorKind::OutOfRange, "read", "range [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                                                   ") exceeds the " + std::to_string(src.nbytes()) + "-byte buffer");
  if (nbytes == 0) {
    flush();
    dev_->check("read");
    return;
  }
  dev_->check("read");
  const size_t begin = offset & ~size_t{3};
  const size_t size = round_up(offset + nbytes, 4) - begin;
  // The status word rides behind the data when a kernel may have set it (see status_flag).
  const bool with_status = status_armed_;
  const size_t mapped = size + (with_status ? 4 : 0);
  // Small reads reuse one staging buffer; large ones use a temporary one, so no big
  // allocation outlives the read (it would count against the memory budget).
  constexpr size_t kKeepStaging = 64 * 1024;
  Buffer staging = staging_;
  if (mapped > staging_size_) {
    if (mapped <= kKeepStaging) {
      if (staging_) dev_->p().BufferRelease(staging_);
      staging_ = nullptr;
      staging_size_ = 0;
      staging_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, kKeepStaging, "read");
      staging_size_ = kKeepStaging;
      staging = staging_;
    } else {
      staging = create_buffer(*dev_, usage::MapRead | usage::CopyDst, mapped, "read");
    }
  }
  struct TempRelease {
    const Procs& p;
    Buffer b;
    bool temp;
    ~TempRelease() { if (temp) p.BufferRelease(b); }
  } temp_release{dev_->p(), staging, staging != staging_};
  const Procs& p = dev_->p();
  if (batch_) {
    // The copy rides at the end of the recorded batch: a step of work plus the read of its
    // result is one submission and one wait.
    const TailCopy tail{buf, begin, staging, size, with_status};
    flush_with(&tail);
  } else {
    CommandEncoderDescriptor ed;
    CommandEncoder enc = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
    p.CommandEncoderCopyBufferToBuffer(enc, buf, begin, staging, 0, size);
    if (with_status) p.CommandEncoderCopyBufferToBuffer(enc, status_handle(), 0, staging, size, 4);
    CommandBufferDescriptor cd;
    CommandBuffer cb = p.CommandEncoderFinish(enc, &cd);
    p.QueueSubmit(dev_->queue(), 1, &cb);
    p.CommandBufferRelease(cb);
    p.CommandEncoderRelease(enc);
    ++stats_.submits;
    in_flight_->submitted(0, size, "read");
  }
  uint32_t status = 0;
  map_read(staging, mapped, offset - begin, dst, nbytes, "read", [&] {
    // A map still pending on the kept staging buffer would poison the next read: drop it
    // (releasing aborts the map) and let the next read create a fresh one.
    if (staging == staging_) {
      p.BufferRelease(staging_);
      staging_ = nullptr;
      staging_size_ = 0;
    }
  }, with_status ? &status : nullptr);
  if (with_status) check_status(status, "read");
}

void WebGPUBackend::map_read(api::Buffer buf, size_t size, size_t off, void* dst, size_t n, const char* op,
                             const std::function<void()>& on_wait_error, uint32_t* last_word) {
  const Procs& p = dev_->p();
  struct R { MapAsyncStatus st = MapAsyncStatus::Error; std::string msg; } r;
  BufferMapCallbackInfo mi;
  mi.callback = [](MapAsyncStatus st, StringView m, void* u1, void*) {
    static_cast<R*>(u1)->st = st;
    static_cast<R*>(u1)->msg = to_string(m);
  };
  mi.userdata1 = &r;
  // Everything before the mapped copy first, oldest first: each wait has the timeout, so a
  // long queue in front of the read is no timeout while the device makes progress.
  in_flight_->drain(op);
  ++stats_.host_waits;
  try {
    dev_->instance().wait(p.BufferMapAsync(buf, map_mode::Read, 0, size, mi), op);
  } catch (const Error&) {
    on_wait_error();
    throw;
  }
  if (r.st != MapAsyncStatus::Success) {
    dev_->check(op);  // a device error explains a failed map best
    throw_error(ErrorKind::RuntimeState, op, "mapping the read-back buffer failed: " + r.msg);
  }
  // Copy out and unmap before anything can throw: a buffer left mapped fails the next map.
  const void* mapped = p.BufferGetConstMappedRange(buf, 0, size);
  if (mapped) std::memcpy(dst, static_cast<const uint8_t*>(mapped) + off, n);
  if (mapped && last_word) std::memcpy(last_word, static_cast<const uint8_t*>(mapped) + size - 4, 4);
  p.BufferUnmap(buf);
  if (!mapped) throw_error(ErrorKind::RuntimeState, op, "wgpuBufferGetConstMappedRange returned null");
  dev_->check(op);
}

void WebGPUBackend::wait_idle(const char* op) {
  // Queue work completes in order: once this tiny copy is mappable, everything before it ran.
  const Procs& p = dev_->p();
  in_flight_->drain(op);  // as map_read: each submission waited for with its own timeout
  if (!sync_dst_) sync_dst_ = create_buffer(*dev_, usage::MapRead | usage::CopyDst, 4, "webgpu");  // see below
  CommandEncoderDescriptor ed;
  CommandEncoder enc = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
  // The copied word is the status word (status_flag): this wait reads it back for free.
  const bool with_status = status_armed_;
  p.CommandEncoderCopyBufferToBuffer(enc, status_handle(), 0, sync_dst_, 0, 4);
  CommandBufferDescriptor cd;
  CommandBuffer cb = p.CommandEncoderFinish(enc, &cd);
  p.QueueSubmit(dev_->queue(), 1, &cb);
  p.CommandBufferRelease(cb);
  p.CommandEncoderRelease(enc);
  BufferMapCallbackInfo mi;
  mi.callback = [](MapAsyncStatus, StringView, void*, void*) {};
  ++stats_.host_waits;
  try {
    dev_->instance().wait(p.BufferMapAsync(sync_dst_, map_mode::Read, 0, 4, mi), op);
  } catch (const Error&) {
    // Timed out: the map stays pending on this buffer, so drop it (the work continues); the
    // next wait creates a fresh one. Not here: creating a buffer waits for its error scope
    // under the same short timeout, and a throw there left the released handle in place
    // (the next synchronize then mapped a freed buffer and crashed inside Dawn).
    p.BufferRelease(sync_dst_);
    sync_dst_ = nullptr;
    throw;
  }
  uint32_t status = 0;
  if (const void* m = p.BufferGetConstMappedRange(sync_dst_, 0, 4)) std::memcpy(&status, m, 4);
  p.BufferUnmap(sync_dst_);
  if (with_status) check_status(status, op);
}

void WebGPUBackend::synchronize() {
  flush();
  dev_->check("synchronize");
  wait_idle("synchronize");
  dev_->p().InstanceProcessEvents(dev_->instance().handle());
  dev_->check("synchronize");
}

// ---- pipelines ----

const Pipeline* WebGPUBackend::pipeline(const ShaderVariant& variant) {
  hostprof::Scope prof(hostprof::Pipeline);
  // The layout mode is part of the cache key, so set_bind_cache() can switch at any time.
  std::string key = variant.key();
  if (bind_cache_) key += "#dyn";
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  const std::string src = expand_shader(variant.shader, variant.defines);
  const Procs& p = dev_->p();
  ShaderSourceWGSL wgsl;
  wgsl.code = {src.data(), src.size()};
  ShaderModuleDescriptor md;
  md.next = &wgsl.chain;
  md.label = {variant.shader.c_str(), kStrlen};
  // Error scopes (not the sticky state): a bad shader is the caller's typed error. The module
  // is checked before the pipeline: with skip_validation Dawn does not survive a pipeline
  // built from a module that failed to compile.
  auto fail = [&](const std::string& msg) {
    throw_error(ErrorKind::RuntimeState, "webgpu: compile " + variant.shader,
                "WGSL shader '" + key + "' failed to compile: " + msg);
  };
  dev_->push_scope(ErrorFilter::Internal);
  dev_->push_scope(ErrorFilter::Validation);
  ShaderModule mod = p.DeviceCreateShaderModule(dev_->handle(), &md);
  std::string err = dev_->pop_scope();
  if (std::string ierr = dev_->pop_scope(); err.empty()) err = ierr;
  if (!mod || !err.empty()) {
    if (mod) p.ShaderModuleRelease(mod);
    fail(err.empty() ? "no shader module returned" : err);
  }
  // Kernels with a params uniform get an explicit layout whose uniform has a dynamic offset,
  // so one bind group serves every dispatch on the same buffers (see dispatch()).
  BindGroupLayout explicit_bgl = nullptr;
  PipelineLayout explicit_pl = nullptr;
  const std::vector<BufferBindingType> bindings = bind_cache_ ? explicit_bindings(src) : std::vector<BufferBindingType>{};
  if (!bindings.empty()) {
    std::vector<BindGroupLayoutEntry> le(bindings.size());
    for (size_t k = 0; k < bindings.size(); ++k) {
      le[k].binding = static_cast<uint32_t>(k);
      le[k].visibility = shader_stage::Compute;
      le[k].buffer.type = bindings[k];
      le[k].buffer.has_dynamic_offset = bindings[k] == BufferBindingType::Uniform;
    }
    BindGroupLayoutDescriptor ld;
    ld.entry_count = le.size();
    ld.entries = le.data();
    dev_->push_scope(ErrorFilter::Validation);
    explicit_bgl = p.DeviceCreateBindGroupLayout(dev_->handle(), &ld);
    if (explicit_bgl) {
      PipelineLayoutDescriptor pld;
      pld.bind_group_layout_count = 1;
      pld.bind_group_layouts = &explicit_bgl;
      explicit_pl = p.DeviceCreatePipelineLayout(dev_->handle(), &pld);
    }
    if (!dev_->pop_scope().empty() || !explicit_pl) {  // keep the automatic layout
      if (explicit_pl) p.PipelineLayoutRelease(explicit_pl);
      if (explicit_bgl) p.BindGroupLayoutRelease(explicit_bgl);
      explicit_pl = nullptr;
      explicit_bgl = nullptr;
    }
  }
  ComputePipelineDescriptor pd;
  pd.label = md.label;
  pd.layout = explicit_pl;
  pd.compute.module = mod;
  pd.compute.entry_point = {"main", kStrlen};
  dev_->push_scope(ErrorFilter::Internal);
  dev_->push_scope(ErrorFilter::Validation);
  ComputePipeline pl = p.DeviceCreateComputePipeline(dev_->handle(), &pd);
  err = dev_->pop_scope();
  if (std::string ierr = dev_->pop_scope(); err.empty()) err = ierr;
  p.ShaderModuleRelease(mod);
  if (!pl || !err.empty()) {
    if (pl) p.ComputePipelineRelease(pl);
    if (explicit_pl) p.PipelineLayoutRelease(explicit_pl);
    if (explicit_bgl) p.BindGroupLayoutRelease(explicit_bgl);
    fail(err.empty() ? "no pipeline returned" : err);
  }
  auto out = std::make_unique<Pipeline>();
  out->pipeline = pl;
  out->layout = explicit_bgl ? explicit_bgl : p.ComputePipelineGetBindGroupLayout(pl, 0);
  out->pipeline_layout = explicit_pl;
  out->bindings = explicit_bgl ? static_cast<uint32_t>(bindings.size()) : 0;
  out->key = key;
  out->name = variant.key();
  ++stats_.pipelines;
  return pipelines_.emplace(key, std::move(out)).first->second.get();
}

size_t WebGPUBackend::VariantIdHash::operator()(const PipelineKey& id) const {
  uint64_t h = reinterpret_cast<uintptr_t>(id.family) * 0x9E3779B97F4A7C15ull;
  for (uint64_t w : id.w) h = (h ^ w) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h ^ (h >> 32));
}

const Pipeline* WebGPUBackend::find_pipeline(const PipelineKey& id) {
  hostprof::Scope prof(hostprof::Pipeline);
  const auto& m = variant_ids_[bind_cache_ ? 1 : 0];
  const auto it = m.find(id);
  return it == m.end() ? nullptr : it->second;
}

void WebGPUBackend::remember_pipeline(const PipelineKey& id, const Pipeline* p) {
  if (p) variant_ids_[bind_cache_ ? 1 : 0].emplace(id, p);
}

// ---- batching ----

void WebGPUBackend::begin_batch() {
  const Procs& p = dev_->p();
  if (profiling_ || batch_timing_) ensure_query_set();  // before the batch exists: it may throw
  const bool pass_timed = batch_timing_ && !profiling_;  // per-dispatch profiling takes precedence
  batch_ = std::make_unique<Batch>();
  CommandEncoderDescriptor ed;
  batch_->encoder = p.DeviceCreateCommandEncoder(dev_->handle(), &ed);
  batch_->profiled = profiling_;
  batch_->pass_timed = pass_timed;
  if (!batch_->profiled) {
    ComputePassDescriptor cd;
    PassTimestampWrites tw;
    if (pass_timed) {
      tw.query_set = query_set_;
      tw.beginning_of_pass_write_index = 0;
      tw.end_of_pass_write_index = 1;
      cd.timestamp_writes = &tw;
    }
    batch_->pass = p.CommandEncoderBeginComputePass(batch_->encoder, &cd);
    ++stats_.passes;
  }
  batch_->arena.reserve(arena_capacity_);
}

void WebGPUBackend::dispatch(const Dispatch& d) {
  hostprof::Scope prof(hostprof::Dispatch);
  if (!d.pipeline) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "null pipeline");
  if (d.args.size() > limits().max_storage_buffers_per_shader_stage)
    throw_error(ErrorKind::Unsupported, "webgpu::dispatch",
                std::to_string(d.args.size()) + " storage bindings exceed the adapter limit");
  const uint32_t maxg = limits().max_compute_workgroups_per_dimension;
  if (d.groups_x > maxg || d.groups_y > maxg || d.groups_z > maxg)
    throw_error(ErrorKind::Unsupported, "webgpu::dispatch", "workgroup count above maxComputeWorkgroupsPerDimension; use grid()");
  if (d.groups_x == 0 || d.groups_y == 0 || d.groups_z == 0) return;  // nothing to run
  const size_t align = std::max<size_t>(256, limits().min_uniform_buffer_offset_alignment);
  const size_t psize = round_up(d.params_size, 16);
  if (psize > 65536) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "params struct above 64 KiB");
  if (batch_ && round_up(batch_->arena.size(), align) + psize > arena_capacity_) flush();
  if (!batch_) begin_batch();
  const Procs& p = dev_->p();

  // Entries live on the stack for the usual binding counts (no heap allocation per dispatch).
  const size_t n_entries = d.args.size() + (d.params_size ? 1 : 0);
  constexpr size_t kInline = 16;
  BindGroupEntry inline_entries[kInline];
  std::vector<BindGroupEntry> heap_entries(n_entries > kInline ? n_entries : 0);
  BindGroupEntry* entries = n_entries > kInline ? heap_entries.data() : inline_entries;
  for (size_t i = 0; i < d.args.size(); ++i) {
    const auto* wb = static_cast<const WebGPUBuffer*>(d.args[i].buffer);
    if (!wb) throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch", "argument " + std::to_string(i) + " has no buffer");
    raw(*wb, "webgpu::dispatch");  // domain check
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].buffer = wb->handle();
    entries[i].size = wb->bound_size();
  }
  const bool dynamic = d.pipeline->bindings != 0;
  if (dynamic && (n_entries != d.pipeline->bindings || !d.params_size))
    throw_error(ErrorKind::InvalidArgument, "webgpu::dispatch",
                "kernel '" + d.pipeline->key + "' declares " + std::to_string(d.pipeline->bindings) +
                    " bindings (storage buffers, then the params uniform) but the launcher passes " +
                    std::to_string(d.args.size()) + " buffers" + (d.params_size ? " and params" : " and no params"));
  uint32_t slot = 0;
  if (d.params_size) {
    auto& a = batch_->arena;
    slot = static_cast<uint32_t>(round_up(a.size(), align));
    a.resize(slot + psize, 0);
    std::memcpy(a.data() + slot, d.params, d.params_size);
    auto& e = entries[n_entries - 1];
    e.binding = static_cast<uint32_t>(d.args.size());
    e.buffer = arena_;
    e.offset = dynamic ? 0 : slot;  // dynamic: the slot is passed to SetBindGroup instead
    e.size = psize;
  }
  BindGroupDescriptor bd;
  bd.layout = d.pipeline->layout;
  bd.entry_count = n_entries;
  bd.entries = entries;
  if (batch_->profiled) {
    // Pipeline and bind groups do not carry over between passes: last_pipeline resets.
    const uint32_t i = static_cast<uint32_t>(batch_->timed.size());
    PassTimestampWrites tw;
    tw.query_set = query_set_;
    tw.beginning_of_pass_write_index = 2 * i;
    tw.end_of_pass_write_index = 2 * i + 1;
    ComputePassDescriptor cd;
    cd.timestamp_writes = &tw;
    batch_->pass = p.CommandEncoderBeginComputePass(batch_->encoder, &cd);
    batch_->last_pipeline = nullptr;
    ++stats_.passes;
  }
  if (d.pipeline != batch_->last_pipeline) {
    p.ComputePassEncoderSetPipeline(batch_->pass, d.pipeline->pipeline);
    batch_->last_pipeline = d.pipeline;
  }
  if (dynamic) {
    if (bind_generation_ != pool_->generation() || bind_groups_.size() >= kMaxBindGroups) drop_bind_groups();
    bind_key_.clear();
    bind_key_.push_back(reinterpret_cast<uintptr_t>(d.pipeline));
    bind_key_.push_back(psize);
    for (size_t i = 0; i < d.args.size(); ++i) {
      bind_key_.push_back(reinterpret_cast<uintptr_t>(entries[i].buffer));
      bind_key_.push_back(entries[i].size);
    }
    BindGroup bg;
    if (auto it = bind_groups_.find(bind_key_); it != bind_groups_.end()) {
      bg = it->second;
      ++stats_.bind_group_reuses;
    } else {
      hostprof::Scope prof_bg(hostprof::BindGroup);
      bg = p.DeviceCreateBindGroup(dev_->handle(), &bd);
      bind_groups_.emplace(bind_key_, bg);
      ++stats_.bind_groups_created;
    }
    hostprof::Scope prof_enc(hostprof::DawnEncode);
    p.ComputePassEncoderSetBindGroup(batch_->pass, 0, bg, 1, &slot);
    p.ComputePassEncoderDispatchWorkgroups(batch_->pass, d.groups_x, d.groups_y, d.groups_z);
  } else {
    BindGroup bg;
    {
      hostprof::Scope prof_bg(hostprof::BindGroup);
      bg = p.DeviceCreateBindGroup(dev_->handle(), &bd);
    }
    ++stats_.bind_groups_created;
    hostprof::Scope prof_enc(hostprof::DawnEncode);
    p.ComputePassEncoderSetBindGroup(batch_->pass, 0, bg, 0, nullptr);
    p.ComputePassEncoderDispatchWorkgroups(batch_->pass, d.groups_x, d.groups_y, d.groups_z);
    p.BindGroupRelease(bg);  // the encoder keeps its own reference
  }
  if (batch_->profiled) {
    p.ComputePassEncoderEnd(batch_->pass);
    p.ComputePassEncoderRelease(batch_->pass);
    batch_->pass = nullptr;
    batch_->timed.push_back(d.pipeline);
    ++stats_.timed_dispatches;
  }
  ++stats_.dispatches;
  // A profiled batch also ends when its query set is full (set_max_batch may have grown).
  const uint32_t limit = batch_->profiled ? std::min(max_batch_, query_count_ / 2) : max_batch_;
  if (++batch_->dispatches >= limit) flush();
}

void WebGPUBackend::flush() { flush_with(nullptr); }

void WebGPUBackend::flush_with(const TailCopy* tail) {
  if (!batch_) return;
  hostprof::Scope prof(hostprof::Flush);
  std::unique_ptr<Batch> b = std::move(batch_);
  const Procs& p = dev_->p();
  if (b->pass) {
    p.ComputePassEncoderEnd(b->pass);
    p.ComputePassEncoderRelease(b->pass);
  }
  const uint32_t n_queries = b->pass_timed ? 2 : 2 * static_cast<uint32_t>(b->timed.size());
  if (n_queries) {
    p.CommandEncoderResolveQuerySet(b->encoder, query_set_, 0, n_queries, query_resolve_, 0);
    p.CommandEncoderCopyBufferToBuffer(b->encoder, query_resolve_, 0, query_read_, 0, uint64_t{8} * n_queries);
  }
  if (tail) p.CommandEncoderCopyBufferToBuffer(b->encoder, tail->src, tail->src_off, tail->dst, 0, tail->size);
  if (tail && tail->status) p.CommandEncoderCopyBufferToBuffer(b->encoder, status_handle(), 0, tail->dst, tail->size, 4);
  CommandBufferDescriptor cd;
  CommandBuffer cb = p.CommandEncoderFinish(b->encoder, &cd);
  // The arena is written once per batch; queue order puts it before this submission.
  if (!b->arena.empty())
    p.QueueWriteBuffer(dev_->queue(), arena_, 0, b->arena.data(), round_up(b->arena.size(), 4));
  p.QueueSubmit(dev_->queue(), 1, &cb);
  p.CommandBufferRelease(cb);
  p.CommandEncoderRelease(b->encoder);
  ++batch_serial_;
  ++stats_.submits;
  // May wait for older submissions (back-pressure); the batch is already handed over.
  in_flight_->submitted(b->dispatches, b->arena.size() + (tail ? tail->size : 0), "webgpu submit");
  if (b->pass_timed) collect_batch_time(*b);
  else if (n_queries) collect_timestamps(*b);
}

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

// ---- helpers for kernels ----

void WebGPUBackend::run_op(OpCall& call) {
  if (Support s = supports(call); !s.ok)
    throw_error(ErrorKind::Unsupported, call.name, "no WebGPU kernel for this step: " + s.reason);
  execute(call);
}

Tensor WebGPUBackend::scratch(const Shape& shape, DType dtype) {
  const size_t nbytes = static_cast<size_t>(checked_numel(shape, "scratch")) * dtype_size(dtype);
  auto st = std::make_shared<Storage>(nbytes, device());
  st->set_buffer(allocate(nbytes));
  return Tensor(std::move(st), shape, contiguous_strides(shape), 0, dtype);
}

Tensor WebGPUBackend::compact(const Tensor& t) {
  if (t.is_contiguous() && t.offset() == 0) return t;
  Tensor out = scratch(t.shape(), t.dtype());
  OpCall call{OpKind::Copy, "contiguous", {t}, {out}, {}};
  execute(call);
  return out;
}

}  // namespace wgt::webgpu
