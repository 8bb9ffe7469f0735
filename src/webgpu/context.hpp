// Internal interface of the WebGPU backend that kernel launchers program against.
// Implemented by src/webgpu/webgpu_backend.cpp (Dawn loader, device, pools, pipelines, batching);
// the non-virtual helpers live in src/webgpu/context.cpp.
//
// Conventions for kernels (see docs/webgpu.md):
//  * A kernel family = its .wgsl files in src/webgpu/shaders/, a pure plan in
//    src/webgpu/plans/<family>_plan.* (the kernel choice and supports()'s answer) and an
//    encoder in src/webgpu/kernels/<family>.cpp, registered with KernelRegistry::add_planned.
//  * Storage bindings 0..n-1 in the order of Dispatch::args, then (if params_size > 0) the
//    params uniform at binding n, all in @group(0). Pipelines use the automatic layout.
//  * Tensors are bound whole (binding offset 0); element offsets/strides travel in params.
//  * Shader variants: the plan's defines drive the preprocessor (shader_registry.hpp): #if /
//    #ifdef blocks select code, every "{{NAME}}" is replaced by the define's value (numbers,
//    type and include names; no WGSL expressions built in C++), and a line `#include "other"`
//    is replaced by the embedded shader `other` (e.g. common code).
//  * Device buffers are sized up to a multiple of 4 bytes, so u8/bool/f16 data can be read
//    as array<u32>.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wgt/backend.hpp"

namespace wgt::webgpu {

// One subgroup-matrix shape the adapter supports (WGPUSubgroupMatrixConfig): component and
// result types as WGPUSubgroupMatrixComponentType (1 f32, 2 f16, 3 u32, 4 i32, 5 u8, 6 i8), the
// result tile M x N and the depth K.
struct MatrixConfig {
  uint32_t component = 0, result = 0;
  uint32_t m = 0, n = 0, k = 0;
};

struct Features {
  bool shader_f16 = false;
  bool subgroups = false;
  bool timestamp_query = false;
  bool subgroup_matrix = false;
  bool packed_dot = false;  // WGSL language feature packed_4x8_integer_dot_product (dot4I8Packed)
  std::vector<MatrixConfig> subgroup_matrix_configs;  // when subgroup_matrix
};

struct Limits {
  uint64_t max_buffer_size = 0;
  uint64_t max_storage_buffer_binding_size = 0;
  uint32_t max_compute_workgroups_per_dimension = 65535;
  uint32_t max_compute_invocations_per_workgroup = 256;
  uint32_t max_compute_workgroup_size_x = 256;
  uint32_t max_compute_workgroup_storage_size = 16384;
  uint32_t max_storage_buffers_per_shader_stage = 8;
  uint32_t min_uniform_buffer_offset_alignment = 256;
  uint32_t min_storage_buffer_offset_alignment = 256;
  uint32_t subgroup_min_size = 0;
  uint32_t subgroup_max_size = 0;
  // Multiprocessors (SMs / CUs) of the adapter where we know them (WebGPU does not report
  // them; device.cpp's table by adapter name), 0 otherwise. Used by shape heuristics only.
  uint32_t compute_units = 0;
};

struct ShaderVariant {
  std::string shader;                                        // embedded shader name (file stem)
  std::vector<std::pair<std::string, std::string>> defines;  // {{NAME}} -> value
  std::string key() const;                                   // pipeline-cache key
};

class Pipeline;  // opaque, owned by the context's cache

// Identity of a shader variant in the pipeline cache: `family` is the address of a
// kernel-family static (unique per family), `w` the family's typed plan fields copied
// bytewise (src/webgpu/plans/plan.hpp make_key), so two keys are the same variant iff all
// fields are equal; the cache hashes the words.
struct PipelineKey {
  const void* family = nullptr;
  std::array<uint64_t, 5> w{};
  bool operator==(const PipelineKey&) const = default;
};

struct Arg {
  const DeviceBuffer* buffer = nullptr;
  bool read_only = true;
};

struct Dispatch {
  const Pipeline* pipeline = nullptr;
  std::vector<Arg> args;
  const void* params = nullptr;
  size_t params_size = 0;
  uint32_t groups_x = 1, groups_y = 1, groups_z = 1;
};

class Context {
 public:
  virtual ~Context() = default;
  virtual const Features& features() const = 0;
  virtual const Limits& limits() const = 0;
  virtual uint32_t subgroup_size() const = 0;  // adapter's typical size (0 if unknown)

  // Compiles (once; cached by variant.key()) a compute pipeline with entry point "main".
  // Shader compilation errors raise wgt::Error(RuntimeState) with the WGSL diagnostics.
  virtual const Pipeline* pipeline(const ShaderVariant& variant) = 0;
  // pipeline(make()), with make() (which builds the ShaderVariant: strings, key) called only the
  // first time `id` is asked for: the per-call path is one hash look-up. Same errors as
  // pipeline() on that first call. make() must always return the same variant for one id.
  template <class MakeVariant>
  const Pipeline* pipeline(const PipelineKey& id, MakeVariant&& make) {
    if (const Pipeline* p = find_pipeline(id)) return p;
    const Pipeline* p = pipeline(make());
    remember_pipeline(id, p);
    return p;
  }
  // The memo behind pipeline(id, make): nullptr when id was not seen (in the current
  // pipeline-layout mode), and the entry to add after a successful pipeline(variant).
  virtual const Pipeline* find_pipeline(const PipelineKey& id) = 0;
  virtual void remember_pipeline(const PipelineKey& id, const Pipeline* p) = 0;
  // Records a dispatch into the current batch (no host wait).
  virtual void dispatch(const Dispatch& d) = 0;
  // Submits the current batch (still no wait).
  virtual void flush() = 0;

  // Binding for a tensor resident on this device (throws RuntimeState if it is not).
  Arg arg(const Tensor& t, bool read_only = true) const;

  // Splits a 1-D count of workgroups into (x, y) within the per-dimension limit.
  std::pair<uint32_t, uint32_t> grid(uint64_t groups) const;

  // Runs the strided->contiguous copy kernel when t is not contiguous (or has an offset),
  // returning a contiguous, offset-0 tensor on this device; returns t otherwise.
  virtual Tensor compact(const Tensor& t) = 0;
  // A new contiguous tensor on this device (uninitialized), for an intermediate result of a
  // launcher that runs several kernels.
  virtual Tensor scratch(const Shape& shape, DType dtype) = 0;
  // Writes host bytes into a device buffer (queued before any later dispatch): for a
  // launcher's constant tables (the FFT's twiddles), uploaded once and cached.
  virtual void write(const DeviceBuffer& dst, size_t offset, const void* src, size_t nbytes) = 0;
  // Runs another op's kernel on this device (checked like any call; throws Unsupported if
  // no kernel takes it): for launchers that finish with a second, generic step.
  virtual void run_op(OpCall& call) = 0;
  // Like compact(), but a contiguous t at any element offset is returned as is: for kernels
  // that take the operand's offset as a parameter (a row slice of a fused projection output
  // then needs no copy).
  Tensor dense(const Tensor& t) { return t.is_contiguous() ? t : compact(t); }
  // For a launcher that does not fuse a call's prologue: runs the prologue op into a scratch
  // tensor and returns the call without it, on that result.
  OpCall run_prologue(const OpCall& call) {
    OpCall pc = prologue_call(call, scratch(call.inputs[0].shape(), call.inputs[0].dtype()));
    run_op(pc);
    return without_prologue(call, pc.outputs[0]);
  }

  // Identity of the runtime instance that owns this context's buffers (DeviceBackend::domain()).
  virtual uint64_t buffer_domain() const = 0;

  // The device status word (docs/semantics.md): a kernel that meets data it cannot handle
  // and cannot throw for (an index out of range) atomicOr's `bit` into word 0 of `arg` (bound
  // read_write, as array<atomic<u32>>). The backend reads the word back with the next read or
  // synchronize, in the same submission and wait (no wait of its own), and then throws
  // OutOfRange naming `op`. Asking for the flag arms that check.
  struct StatusFlag {
    Arg arg;
    uint32_t bit;
  };
  virtual StatusFlag status_flag(const char* op) = 0;
};

// ---- kernel registry ----
// A planned family's entry for one op kind: `plan` is the capability check, which returns the
// family's typed plan type-erased in Support::plan (so supports() and execute() share one
// plan per call), and `encode` records that plan's dispatches.
using KernelPlan = Support (*)(const Context&, const OpCall&);
using KernelEncode = void (*)(Context&, OpCall&, const void* plan);
// Which calls of its kind an entry owns: a family that shares op kinds with another by the
// call's data (complex64 calls of Binary, MatMul, ...) claims its calls with this; an entry
// without one takes the kind's other calls.
using KernelOwns = bool (*)(const OpCall&);

// Plans computed by planned entries since the process started (every plan() call, rejects
// included): a test hook to check that a call is planned once.
uint64_t kernel_plans_computed();
void count_kernel_plan();

struct KernelEntry {
  OpKind kind;
  KernelPlan plan = nullptr;
  KernelEncode encode = nullptr;
  KernelOwns owns = nullptr;  // null: every call of `kind` no owning entry claims
};

// Adapts a family's Plan (Planned<P> (*)(const Context&, const OpCall&)) and Encode
// (void (*)(Context&, OpCall&, const P&)) to the registry's type-erased signatures.
template <class P, auto Plan, auto Encode>
struct PlannedKernel {
  static Support plan(const Context& ctx, const OpCall& call) {
    count_kernel_plan();
    auto p = Plan(ctx, call);
    if (!p.ok()) return Support::no(std::move(p.reject));
    return Support::yes(std::make_shared<const P>(std::move(p.plan)));
  }
  static void encode(Context& ctx, OpCall& call, const void* plan) { Encode(ctx, call, *static_cast<const P*>(plan)); }
};

class KernelRegistry {
 public:
  template <class P, auto Plan, auto Encode>
  void add_planned(OpKind kind, KernelOwns owns = nullptr) {
    entries_.push_back({kind, &PlannedKernel<P, Plan, Encode>::plan, &PlannedKernel<P, Plan, Encode>::encode, owns});
  }
  // The entry for `call`: one whose predicate claims it, else the kind's general entry
  // (registration order does not matter).
  const KernelEntry* find(const OpCall& call) const {
    const KernelEntry* general = nullptr;
    for (const auto& e : entries_) {
      if (e.kind != call.kind) continue;
      if (!e.owns) general = general ? general : &e;
      else if (e.owns(call)) return &e;
    }
    return general;
  }

 private:
  std::vector<KernelEntry> entries_;
};

// One registration function per kernel family (src/webgpu/kernels/<family>.cpp).
void register_elementwise_kernels(KernelRegistry&);  // Copy, Unary, Binary, Where, Cast, Fill, Arange, Rand*
void register_reduce_kernels(KernelRegistry&);       // Reduce, Softmax, LogSoftmax, RMSNorm, LayerNorm
void register_matmul_kernels(KernelRegistry&);       // MatMul (incl. transpose_b)
void register_index_kernels(KernelRegistry&);        // Concat, IndexSelect, Gather
void register_nn_kernels(KernelRegistry&);           // Rope, SiluMul, KVAppend, Attention
void register_quant_kernels(KernelRegistry&);        // QMatMul, QDequantize, QGetRows (every QType)
void register_sparse_kernels(KernelRegistry&);       // SpMM, SDDMM, SpAddDense, SpRowReduce, SpSoftmax
void register_fft_kernels(KernelRegistry&);          // Fft (c64 / f32 lines, plans/fft_plan.hpp)
void register_complex_kernels(KernelRegistry&);      // the c64 calls of Unary, Binary, Cast, Where,
                                                     // Fill, Reduce, MatMul (is_complex_call)

}  // namespace wgt::webgpu
