// The backend interface: every backend executes OpCalls on tensors that live on its device.
// The runtime (policy) decides which backend runs a call; backends never decide policy.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "wgt/ops.hpp"
#include "wgt/tensor.hpp"

namespace wgt {

enum class OpKind : uint8_t {
  Unary, Binary, Where, Cast, Fill, Arange, RandUniform, RandNormal, Reduce, MatMul,
  Softmax, LogSoftmax, RMSNorm, LayerNorm, Concat, Copy, IndexSelect, Gather,
  // transformer ops
  Rope, Attention, SiluMul, KVAppend,
  // quantized ops
  QMatMul,      // inputs {x f32 [M, K], packed weight bytes u8 [N * row_bytes]}; attrs.qtype; out f32 [M, N]
  QDequantize,  // input packed bytes u8 [rows, row_bytes]; attrs.qtype; out f32 [rows, cols]
  QGetRows,     // inputs {packed bytes u8 [rows, row_bytes], ids i32 [n]}; attrs.qtype; out f32 [n, cols]
  // sparse CSR; a CSR operand is the inputs {indptr, indices, values} (i32 or
  // i64 indices); contracts in src/sparse/sparse_ops.cpp
  SpMM,         // {indptr, indices, values, B [cols] or [cols, n], bin_rows, row_blocks}; out [rows] or [rows, n]
  SDDMM,        // {indptr, indices, X [rows, k], Y [k, cols]}; out values [nnz]
  SpAddDense,   // {indptr, indices, values, D [rows, cols]}; out dense [rows, cols]
  SpRowReduce,  // {indptr, values}; attrs.reduce Sum or Max; out [rows]
  SpSoftmax,    // {indptr, values}; out values [nnz]
  // tensor algebra
  Fft,          // 1-D DFT along attrs.axis; attrs.fft_kind, fft_n, scalar0 = scale (src/fft/fft_ops.cpp)
};
const char* op_kind_name(OpKind);

struct OpAttrs {
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add;
  ReduceOp reduce = ReduceOp::Sum;
  std::vector<int64_t> axes;  // Reduce: normalized, sorted
  bool keepdim = false;
  bool transpose_b = false;   // MatMul
  int64_t axis = 0;           // Softmax/Concat/IndexSelect/Gather (normalized)
  double eps = 0.0;           // norms
  double scalar0 = 0.0;       // Fill value / Arange start / rand low|mean
  double scalar1 = 0.0;       // Arange step / rand high|stddev
  uint64_t seed = 0;          // rand
  bool has_weight = false;    // norms: inputs[1] is weight
  bool has_bias = false;      // LayerNorm: inputs[2] (or [1] without weight) is bias; MatMul: inputs[2] is an addend
  // MatMul: a transform of the first operand before the product; its extra operand is the
  // last input (contract in src/ops/linalg.cpp).
  enum class Prologue : uint8_t { None, RmsNorm, SiluMul };
  Prologue prologue = Prologue::None;
  // transformer ops; contracts in src/ops/nn.cpp
  int64_t n_rot = 0;          // Rope: rotated dims (even, <= head_dim); KVAppend: > 0 applies RoPE
  bool rope_neox = false;     // Rope, KVAppend: rotate halves (neox) instead of interleaved pairs
  bool rope_factors = false;  // Rope, KVAppend, MatMul with n_rot: an f32 [n_rot/2] freq-factors input (see src/ops/nn.cpp)
  int64_t pos_offset = 0;     // Rope: position of row 0 when no positions tensor; KVAppend: first row (and its position)
  bool causal = false;        // Attention (scale in scalar0)
  bool has_mask = false;      // Attention: inputs[3] is an additive mask [q_len, kv_len]
  uint8_t qtype = 0;          // quantized ops: a wgt::QType value (wgt/quant.hpp)
  // sparse: the CSR operand's columns and the kernel schedule chosen from its
  // cached row statistics (wgt::SparsePlan; WebGPU kernels only, the CPU ignores them)
  int64_t sp_cols = 0;
  uint8_t sp_schedule = 0;    // a wgt::SparseSchedule value
  int64_t sp_lanes = 1;       // GroupPerRow: threads per row
  int64_t sp_bin_start[5] = {0, 0, 0, 0, 0};  // Binned: bin b's rows are bin_rows[start[b], start[b+1])
  int64_t sp_blocks = 0;      // Adaptive: row blocks (row_blocks holds blocks + 1 pairs); 0: none
  int64_t sp_split_rows = 0;  // Adaptive: rows split over several row blocks (0: no fix-up pass)
  // tensor algebra; contract in src/fft/fft_ops.cpp
  enum class FftKind : uint8_t { Forward, Inverse, RealForward, RealInverse };
  FftKind fft_kind = FftKind::Forward;
  int64_t fft_n = 0;          // Fft: the transform length
};

// One operation instance. Inputs may be arbitrary strided views; outputs are preallocated,
// contiguous, on the executing backend's device.
struct OpCall {
  OpKind kind;
  std::string name;  // public op name, e.g. "add", "matmul_t"
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  OpAttrs attrs;
  // Estimated work (elementwise-equivalent flops) for load thresholds.
  double work = 0.0;
  // Shapes/dtypes of the outputs, set by the runtime before supports() (outputs are
  // allocated only after a backend is chosen; creation ops and casts need these to decide).
  std::vector<std::pair<Shape, DType>> out_specs{};
  // Bit i set: the op writes inputs[i] in place (RoPE in place, KV-cache appends). The runtime
  // then runs it on the backend of that tensor's device and never moves that tensor.
  uint32_t mutates = 0;
  // The plan the backend `plan_by` made of this very call in supports() (Support::plan), handed
  // to its execute() by the runtime so a kernel is chosen once per call. Opaque outside that
  // backend. The runtime sets it only when nothing the plan saw changed between the check and
  // the execution (no input moved); the backend takes it (leaving it empty) when it executes,
  // so copies of the call made by a launcher never carry a plan of another call.
  std::shared_ptr<const void> plan{};
  const void* plan_by = nullptr;
};

// Splitting a call with a prologue (attrs.prologue != None; its operand is the last input)
// into two ops, for backends that do not fuse it (src/ops/prologue.cpp): the RMSNorm /
// SiluMul call on inputs[0] writing `out` (shape and dtype of inputs[0]), and the call itself
// on the transformed first operand, without the prologue.
OpCall prologue_call(const OpCall& call, Tensor out);
OpCall without_prologue(const OpCall& call, Tensor transformed);

struct Support {
  bool ok = true;
  std::string reason;  // why not, when !ok
  // When ok: the backend's private plan of the call (kernel choice), or null. The runtime
  // passes it on to execute() through OpCall::plan.
  std::shared_ptr<const void> plan{};
  static Support yes(std::shared_ptr<const void> plan = nullptr) { return {true, {}, std::move(plan)}; }
  static Support no(std::string why) { return {false, std::move(why), nullptr}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu-reference", "cpu-fast", "webgpu:0"
  virtual Device device() const = 0;
  // Capability check: can this backend run the call (dtypes, ranks, sizes, device limits)?
  // A backend that plans its kernels returns the plan with the yes (Support::plan).
  virtual Support supports(const OpCall& call) const = 0;
  // Runs the call. Inputs and outputs are on device(). May be asynchronous on device backends.
  // call.plan, when call.plan_by is this backend, is the plan of this call from supports().
  virtual void execute(OpCall& call) = 0;
};

// Monotonic counters of a device backend's submissions (what wgt::Session reports).
struct SubmissionCounters {
  uint64_t dispatches = 0;
  uint64_t submissions = 0;
  uint64_t host_waits = 0;
  uint64_t session_splits = 0;  // submissions a device bound forced inside a session
};

// Device backends also manage memory and transfers.
class DeviceBackend : public Backend {
 public:
  virtual std::shared_ptr<DeviceBuffer> allocate(size_t nbytes) = 0;  // throws OutOfMemory
  virtual void write(const DeviceBuffer& dst, size_t offset, const void* src, size_t nbytes) = 0;
  virtual void read(const DeviceBuffer& src, size_t offset, void* dst, size_t nbytes) = 0;  // waits
  virtual void synchronize() = 0;
  // Hands the work recorded so far to the device without waiting for it.
  virtual void submit() {}
  virtual SubmissionCounters counters() const { return {}; }
  // Sessions (wgt/session.hpp), called under the runtime lock. open_session() enters one level
  // of the calling thread's session on this device and returns whether it is the outermost;
  // RuntimeState when another thread's session is open here. close_session() leaves one level
  // (the caller submits and waits first when it was the outermost). A backend that submits
  // every op at once has nothing to batch and may keep these defaults.
  virtual bool open_session() { return true; }
  virtual void close_session() {}
  virtual uint64_t domain() const = 0;
  // Memory accounting for the runtime's budget: every device byte this backend holds
  // (live buffers + pooled free buffers + scratch), and a way to give pooled bytes back.
  virtual uint64_t bytes_allocated() const { return 0; }
  virtual uint64_t bytes_pooled() const { return 0; }
  virtual void release_cached() {}
  // Device-local memory reported by the adapter (0 = unknown).
  virtual uint64_t memory_heap_bytes() const { return 0; }
  // True when the adapter is a software (CPU) implementation such as lavapipe.
  virtual bool is_software() const { return false; }
  // The native API's instance and device handles (Dawn: WGPUInstance, WGPUDevice), for interop.
  virtual void* native_instance() const { return nullptr; }
  virtual void* native_device() const { return nullptr; }
};

}  // namespace wgt
