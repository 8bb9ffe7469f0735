// Tuning of the planned kernel families: typed values taken once per settings snapshot from
// the WGT_MATMUL_* / WGT_QMATMUL_* / WGT_QMATVEC_* / WGT_REDUCE_* / WGT_ATTN_* / WGT_FFT_* variables
// (runtime/settings.hpp),
// or set in C++ (tests, benchmarks) with set_kernel_tuning_override. The plans read these and
// never the environment. Checks that need the adapter (a tile that fits its limits) are the
// plans' own.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

namespace wgt::webgpu {

enum class F16Store : uint8_t { Auto, Native, Packed };
// complex64 products (plans/complex_plan.hpp): four real products per complex one, or three
// (Gauss: re = ar br - ai bi, im = (ar + ai)(br + bi) - ar br - ai bi).
enum class ComplexAlgo : uint8_t { Auto, FourMult, ThreeMult };
// How the subgroup-matrix f16 kernel (shaders/sgmat_core.wgsl) moves each K chunk from storage
// to workgroup memory (plans/matmul_plan.hpp, sgmat_variant_problem): Staged = 8-byte vec4<f16>
// loads and 16-bit workgroup stores; Wide = 16-byte vec4<u32> loads. Auto = Wide where the tile
// and the call's alignment allow it, else Staged. The order is WGT_MATMUL_SGMAT_VARIANT's choices.
enum class SgVariant : uint8_t { Auto, Staged, Wide };

struct MatmulTuning {
  std::optional<std::array<uint32_t, 5>> tile;      // BM BN BK TM TN of the tiled kernel
  bool sgmat_off = false;                           // never use the subgroup-matrix kernel
  std::optional<std::array<uint32_t, 5>> sgmat;     // BM BN BK FM FN of the subgroup-matrix kernel
  SgVariant sgmat_variant = SgVariant::Auto;        // its K-chunk data path
  // Diagnosis only, results wrong by design: 1 skip the in-loop staging stores, 2 skip the
  // in-loop global fetches (only chunk 0 is fetched and staged), 3 fragment loads hoisted out of
  // the K loop, 4 fewer MMAs (each loaded fragment used once), 5 MMAs only (no fetch, no
  // staging, hoisted fragments).
  uint8_t sgmat_ablate = 0;
  bool gemv_off = false;                            // never use the small-M kernels
  std::optional<std::array<uint32_t, 2>> gemv;      // WG KS of the scalar gemv
  bool gemv_vec_off = false;                        // never use the vector gemv
  std::optional<std::array<uint32_t, 3>> gemv_vec;  // WG KS RB of the vector gemv
  bool subgroups = true;                            // subgroupAdd in the vector gemv where the device has it
  bool vec = true;                                  // vec4 loads/stores where the layout allows
  bool f16_acc = false;                             // f16 accumulation of native-f16 tiles
  F16Store f16 = F16Store::Auto;                    // how f16 operands are stored in the shader
  ComplexAlgo c64 = ComplexAlgo::Auto;              // c64: 4 or 3 real products (Auto: by size)
  std::optional<std::array<uint32_t, 5>> c64_tile;  // BM BN BK TM TN of the c64 tiled kernel
};

// The M <= 4 quantized matvec: f32 x (Stream), or x quantized to one (I8) or two (I8x2) 8-bit
// terms with packed integer dot products (docs/quantization.md).
enum class QMatvecKernel : uint8_t { Stream, I8, I8x2 };

struct QMatvecTuning {
  QMatvecKernel kernel = QMatvecKernel::I8x2;
  bool subgroups = true;   // the subgroup reduction where the device has it
  bool packed_dot = true;  // false: behave as if dot4I8Packed were missing (WGT_WEBGPU_DISABLE_PACKED_DOT)
  bool prefill_sgmat = true;  // M > 4 on subgroup matrices where the adapter has them (WGT_QMATMUL_SGMAT)
  std::optional<std::array<uint32_t, 5>> prefill_tile;  // BM BN BK FM FN of that kernel; unset: the plan's
  std::optional<uint32_t> rows, unroll, warps, ksplit, wave;  // unset: the plan's defaults
};

// The row kernels of the reduce family (softmax, norms, sum / mean rows).
struct ReduceTuning {
  bool subgroups = true;  // subgroup reductions where the device has them (WGT_REDUCE_SUBGROUPS)
};

// The attention kernels (src/webgpu/plans/attention_plan.hpp): prefill and decode (M <= 4 queries).
struct AttentionTuning {
  bool prefill_scalar = false;  // prefill: always the scalar kernel, never the subgroup-matrix one
  // The subgroup-matrix prefill's subgroups x keys per tile x lanes per score row (0: all).
  std::optional<std::array<uint32_t, 3>> prefill_sg;
  // Diagnosis only (tests set it through set_kernel_tuning_override; no variable): with a
  // mode, the subgroup-matrix prefill writes an intermediate of its first key tile instead of O
  // and stops, so a test can check each tensor-core step apart from the softmax and P V. At
  // output element (r, h, j): 1 the raw scores Q K^T (key j < min(keys per tile, d)); 2 the
  // staged Q fragment stored back (q(r, h, j), j < SK); 3 the K^T fragment stored back
  // (k(key r % SM, head, j), j < SK); 4 the scores over d < SK alone (one product).
  uint8_t prefill_sg_debug = 0;
  bool decode_split = false;  // always the staged split-KV kernel, never the subgroup one
  // The subgroup decode with one key split stores the normalized output itself instead of
  // partials for the reduction pass (same values, one dispatch less per call).
  bool decode_direct = true;
  std::optional<uint32_t> warps, lanes, unroll, chunk;  // the subgroup kernel's shape; unset: the plan's
};

// The FFT family (plans/fft_plan.hpp).
enum class FftKernel : uint8_t { Auto, Local, Stockham };
struct FftTuning {
  FftKernel kernel = FftKernel::Auto;  // power-of-two lengths: Auto = Stockham where it applies
  std::optional<uint32_t> row;         // four-step row length n2; unset: the largest one-workgroup length
  // Stockham: points per invocation and largest radix (16, 8 or 4); unset: kFftDefaultRadix (8). Fewer points
  // per invocation hold fewer registers, with more invocations and exchange passes per line.
  std::optional<uint32_t> radix;
  // Stockham: exchange the real and the imaginary parts in turn through an f32 array, half
  // the workgroup memory (more workgroups resident where it limits them) for twice the barriers.
  bool split_exchange = true;
};

struct KernelTuning {
  MatmulTuning matmul;
  QMatvecTuning qmatvec;
  ReduceTuning reduce;
  AttentionTuning attention;
  FftTuning fft;
};

// The tuning in force: the override if one is set, else the one converted from the current
// settings snapshot (cached per snapshot and thread: one pointer compare per call). Reading
// the settings throws the error of a bad WGT_* value of that family.
const MatmulTuning& matmul_tuning();
const QMatvecTuning& qmatvec_tuning();
const ReduceTuning& reduce_tuning();
const AttentionTuning& attention_tuning();
const FftTuning& fft_tuning();
// Every family from the current settings, ignoring any override.
KernelTuning kernel_tuning_from_settings();
// Replaces (or with nullopt, stops replacing) the settings' tuning for every thread. Not
// synchronized with kernel launches: set it while no other thread runs ops.
void set_kernel_tuning_override(const std::optional<KernelTuning>& t);

}  // namespace wgt::webgpu
