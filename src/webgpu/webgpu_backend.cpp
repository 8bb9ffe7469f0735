// WebGPU backend: construction, the capability check and execution of op calls, memory
// accounting, and the helpers kernels call (run_op, scratch, compact). Transfers, pipelines,
// batching and timing live in webgpu_transfers.cpp, webgpu_pipelines.cpp,
// webgpu_batching.cpp and webgpu_timing.cpp.
#include "webgpu/webgpu_backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <unistd.h>

#include "runtime/settings.hpp"
#include "webgpu/buffer_pool.hpp"
#include "webgpu/plans/complex_plan.hpp"
#include "webgpu/shader_registry.hpp"
#include "webgpu/webgpu_backend_impl.hpp"

namespace wgt::webgpu {

using namespace api;

namespace {

uint64_t new_domain() {
  // Unique per backend instance and per process: a foreign buffer is never mistaken for ours.
  static std::atomic<uint64_t> counter{0};
  return (static_cast<uint64_t>(::getpid()) << 32) ^ 0x5747'0000ull ^ ++counter;
}

}  // namespace

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

WebGPUBackend::WebGPUBackend(DawnInstance& inst, size_t adapter_index, int device_index)
    : WebGPUBackend(std::make_unique<DawnDevice>(inst, adapter_index), device_index) {}

WebGPUBackend::WebGPUBackend(std::unique_ptr<DawnDevice> dev, int device_index)
    : dev_(std::move(dev)),
      in_flight_(std::make_unique<SubmissionQueue>(*dev_)),
      index_(device_index),
      domain_(new_domain()) {
  const Settings& s = settings();
  pool_ = std::make_shared<BufferPool>(*dev_, domain_, *s.webgpu_pool_limit);
  max_batch_ = *s.webgpu_batch;
  early_batch_ = *s.webgpu_early;
  // Cached bind groups with a dynamic-offset params uniform: on by default on hardware
  // adapters. Off on software ones: lavapipe runs a dispatch with a dynamic uniform offset
  // about twice as slow (per tiny add, docs/webgpu.md), more than the host time saved.
  bind_cache_ = s.webgpu_bind_cache->value_or(!is_software());
  register_elementwise_kernels(registry_);
  register_reduce_kernels(registry_);
  register_matmul_kernels(registry_);
  register_index_kernels(registry_);
  register_nn_kernels(registry_);
  register_quant_kernels(registry_);
  register_sparse_kernels(registry_);
  register_fft_kernels(registry_);
  register_complex_kernels(registry_);
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
  // The sparse kernels read i64 CSR indices as u32 words and judge their dtypes themselves.
  // Every other kernel computes in WGSL types. f16 is judged per kernel: packed f16 (u32
  // words + unpack2x16float) needs no shader-f16, only kernels with native f16 code do.
  const bool raw_in = call.kind == OpKind::Copy || call.kind == OpKind::Concat || call.kind == OpKind::IndexSelect ||
                      call.kind == OpKind::Gather || call.kind == OpKind::SpMM || call.kind == OpKind::SDDMM ||
                      call.kind == OpKind::SpAddDense || call.kind == OpKind::SpRowReduce ||
                      call.kind == OpKind::SpSoftmax;
  const bool raw_out = raw_in || (call.kind == OpKind::Reduce && call.attrs.reduce == ReduceOp::ArgMax);
  // Calls on c64 data go to the complex family (kernels/complex.cpp), which reads c64 as
  // interleaved f32 pairs; the FFT kernel reads and writes c64 the same way and judges dtypes.
  const bool c64 = is_complex_call(call) || call.kind == OpKind::Fft;
  auto check_tensor = [&](const Tensor& t, bool raw) -> Support {
    if (!t.defined()) return Support::yes();
    switch (raw ? DType::F32 : t.dtype()) {
      case DType::C64:
        if (c64) break;
        [[fallthrough]];
      case DType::I64: case DType::F64:
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
    if (!raw_out && (dt == DType::I64 || dt == DType::F64 || (dt == DType::C64 && !c64)))
      return Support::no(std::string("output dtype ") + dtype_name(dt) + " has no WebGPU (WGSL) representation");
    uint64_t n = dtype_size(dt);
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    if (n > limits().max_storage_buffer_binding_size)
      return Support::no("output " + shape_str(shape) + " of " + std::to_string(n) +
                         " bytes exceeds maxStorageBufferBindingSize (" +
                         std::to_string(limits().max_storage_buffer_binding_size) + ")");
  }
  if (const KernelEntry* e = registry_.find(call)) return e->plan(*this, call);
  return Support::no(std::string("no WebGPU kernel for op kind ") + op_kind_name(call.kind));
}

namespace {
std::atomic<uint64_t> g_plans_computed{0};
}  // namespace
uint64_t kernel_plans_computed() { return g_plans_computed.load(std::memory_order_relaxed); }
void count_kernel_plan() { g_plans_computed.fetch_add(1, std::memory_order_relaxed); }

void WebGPUBackend::execute(OpCall& call) {
  dev_->check(call.name.c_str());
  // The plan supports() made of this call, if the runtime handed it over; taken out of the
  // call so that no copy a launcher makes of it carries it.
  std::shared_ptr<const void> plan = call.plan_by == this ? std::move(call.plan) : nullptr;
  call.plan.reset();
  call.plan_by = nullptr;
  const KernelEntry* e = registry_.find(call);
  if (!e)
    throw_error(ErrorKind::Unsupported, call.name, std::string("no WebGPU kernel for op kind ") + op_kind_name(call.kind));
  if (!plan) {
    Support s = e->plan(*this, call);
    if (!s.ok) throw_error(ErrorKind::Unsupported, call.name, s.reason + " (on " + name() + ")");
    plan = std::move(s.plan);
  }
  e->encode(*this, call, plan.get());
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

// ---- helpers for kernels ----

void WebGPUBackend::run_op(OpCall& call) {
  Support s = supports(call);
  if (!s.ok) throw_error(ErrorKind::Unsupported, call.name, "no WebGPU kernel for this step: " + s.reason);
  call.plan = std::move(s.plan);  // checked and planned once, as through the runtime
  call.plan_by = this;
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
