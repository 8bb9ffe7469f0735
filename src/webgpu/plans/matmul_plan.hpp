// The matmul family's plan (OpKind::MatMul: matmul, matmul_t and their fused forms): which
// kernel (tiled, scalar gemv, vector gemv), its tile, how each operand is stored and read,
// which prologue / addend / RoPE-append epilogue is fused. plan_matmul is pure (no Dawn call);
// kernels/matmul.cpp encodes the plan. The kernels: shaders/matmul_tiled.wgsl,
// matmul_gemv.wgsl, matmul_gemv_vec.wgsl over matmul_io.wgsl.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"

namespace wgt::webgpu {

// SgMat: the tiled product on subgroup matrices (tensor cores), f16 operands and output.
enum class MatmulKernel : uint8_t { Tiled, Gemv, GemvVec, SgMat };
// What the launcher does: run the planned kernel, or first run the call's prologue op into a
// scratch tensor and plan the plain product again, or run the product then kv_append_rope.
enum class MatmulRoute : uint8_t { Kernel, PrologueFirst, RopeAppendUnfused };
// Storage of an operand in the shader (the values are matmul_io.wgsl's A_STORE / B_STORE).
enum class MatmulStore : uint8_t { F32 = 0, F16 = 1, F16Packed = 2 };
// How outputs are written (matmul_io.wgsl's O_MODE). Vec4: whole vec4 (N % 4 == 0, aligned
// offset). Paired: packed f16 whose u32 words each belong to one invocation (even offset and
// N). Atomic: packed f16 where two invocations may share a word.
enum class MatmulOut : uint8_t { Scalar = 0, Vec4 = 1, Paired = 2, Atomic = 3 };

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct MatmulShader {
  MatmulKernel kernel = MatmulKernel::Tiled;
  MatmulStore a_store = MatmulStore::F32, b_store = MatmulStore::F32;  // the output is stored like A
  MatmulOut out = MatmulOut::Scalar;
  uint8_t a_kfast = 0, b_kfast = 0;  // the operand's K stride is the unit one
  uint8_t a_vec = 0, b_vec = 0;      // tiled: vec4 loads along the unit-stride dim
  uint8_t acc16 = 0;                 // tiled: f16 compute type
  uint8_t sg = 0;                    // vector gemv: subgroup reduction
  uint8_t fuse_c = 0;                // vector gemv: the addend added in the epilogue
  uint8_t pro = 0;                   // vector gemv: fused prologue, 0 none, 1 RMSNorm, 2 SiluMul
  uint8_t epi = 0, epi_freqs = 0;    // vector gemv: the rope_append epilogue [with freq factors]
  uint8_t cache_f16 = 0;             // that epilogue's caches are f16
  uint8_t mr = 0;                    // vector gemv: rows of A (= M, 1..4)
  uint8_t sm = 0, sn = 0, sk = 0;    // sgmat: the subgroup-matrix shape (result SM x SN, depth SK)
  uint8_t sgs = 0;                   // sgmat: the adapter's (fixed) subgroup size
  uint8_t sgv = 0;                   // sgmat: the K-chunk data path (SgVariant: Staged or Wide)
  uint8_t abl = 0;                   // sgmat: the ablation (MatmulTuning::sgmat_ablate; wrong results)
  // Tiled: workgroup tile and each invocation's TM x TN outputs. SgMat: workgroup tile and
  // each subgroup's TM x TN fragments.
  uint16_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0;
  uint16_t wg = 0, ks = 0, rb = 0;   // gemvs: invocations, K-splitters per column, rows per invocation
};

struct MatmulPlan {
  MatmulRoute route = MatmulRoute::Kernel;
  MatmulShader shader;
  bool compact_a = false, compact_b = false;  // the operand has no unit matrix stride: compacted first

  uint32_t row_tile() const;  // output rows per workgroup (grid y)
  uint32_t col_tile() const;  // output columns per workgroup (grid x)
  PipelineKey key() const;    // the pipeline-cache key (cheap: a copy of `shader`)
  ShaderVariant variant() const;  // shader name and defines (built once per new pipeline)
  // e.g. "tiled 128x128x8 8x8 acc=f32 a:k b:n a:v4 b:v4 o:v4", "gemv 256x64 kfast",
  // "gemv_vec 256x32x2 m1 sg +norm" (" f16p" for packed f16, " b:f16" for mixed precision),
  // "sgmat 128x128x32 4x2 frag=16x16x16 b:n o:v4 v:wide" (the data path always named).
  std::string name() const;
};

// The subgroup-matrix shape the sgmat kernel uses on this adapter (f16 -> f32, 16x16x16
// preferred, else 16x8x16, else 8x8x8), or nullopt where it cannot run (no feature, no such
// config, or a subgroup size that is not fixed).
struct SgMatShape {
  uint32_t m, n, k, subgroup;
};
std::optional<SgMatShape> sgmat_shape(const Caps& caps);

// A workgroup tile of the subgroup-matrix kernels (matmul_sgmat.wgsl, q_matmul_sgmat.wgsl):
// BM x BN outputs, K chunks of BK, FM x FN fragments per subgroup.
struct SgTile {
  uint32_t bm, bn, bk, fm, fn;
};
uint32_t sgmat_subgroups(const SgTile& t, const SgMatShape& sh);
// Empty when `t` runs on this device with B staged K-contiguous (b_kfast) or N-contiguous,
// else the reason.
std::string sgmat_tile_problem(const Limits& l, const SgTile& t, const SgMatShape& sh, bool b_kfast);
// Empty when tile `t` can run data path `v` (SgVariant), else the reason: 16-byte loads need
// whole vec4<u32> per invocation. Staged (and Auto, which falls back to it) always can.
std::string sgmat_variant_problem(const SgTile& t, const SgMatShape& sh, SgVariant v);
// The default tile of an M x N product over `batch` matrices, or nullopt when none fits the
// device.
std::optional<SgTile> sgmat_default_tile(const Limits& l, const SgMatShape& sh, bool b_kfast, uint64_t M, uint64_t N,
                                         uint64_t batch);

// The plan of `call`, or why WebGPU's matmul family cannot run it. Throws InvalidArgument for a
// tuning value the device cannot honour (a tile over its limits, native f16 without it).
Planned<MatmulPlan> plan_matmul(const Caps& caps, const MatmulTuning& tuning, const OpCall& call);

constexpr uint32_t kGemvMaxM = 4;        // MMAX of matmul_gemv.wgsl; also the vector gemv's M bound
constexpr uint32_t kGemvVecStage = 2048;  // A values staged per chunk by matmul_gemv_vec.wgsl (MR x KC)

// ---- geometry shared by the plan and the launcher ----

// Logical 2-D view of one operand as the kernels read it: element (r, c) at offset + r*rs +
// c*cs (+ batch strides); a view with no unit matrix stride is described as its compacted
// (contiguous, offset 0) copy.
struct MatmulOperand {
  int dim = 0;
  std::array<int64_t, 8> shape{}, strides{};
  int64_t offset = 0;
  int64_t rs = 0, cs = 0;
  bool compact = false;
  uint64_t storage_bytes = 0;  // of the buffer the kernel binds (the compacted copy's when compact)
  bool has_storage = false;
};
MatmulOperand matmul_operand(const Tensor& t, bool transposed);

// One folded batch dim: size and element strides of a, b and the output.
struct BatchDim {
  int64_t size, sa, sb, so;
};
// Batch dims of the output with a's and b's broadcast strides; size-1 dims dropped and
// adjacent dims merged where all three operands allow it. Outermost first.
struct BatchDims {
  std::array<BatchDim, 8> d{};
  size_t n = 0;
};
BatchDims fold_batch(const MatmulOperand& a, const MatmulOperand& b, const Tensor& out);

}  // namespace wgt::webgpu
