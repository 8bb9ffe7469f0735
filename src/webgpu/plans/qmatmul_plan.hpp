// The quantized-matmul family's plan (OpKind::QMatMul: qmatmul_t and its fused forms,
// y = x W^T with W packed GGUF blocks): for M <= 4 the streaming matvec (q_mv_stream[_sg]) over
// the format's q*_i8 part with 8-bit x (I8) or its q*_lane part with f32 x (Stream), with the
// warp shape and the fused prologue / addend; above that the prefill kernels over the format's
// q*_decode: on subgroup matrices (q_matmul_sgmat, x rounded to f16 per row by q_x_f16 first)
// where the adapter has f16 ones, else the tiled f32 kernel (q_matmul_tiled). plan_qmatmul is
// pure (no Dawn call); kernels/quant.cpp encodes the plan.
#pragma once
#include <cstdint>

#include "webgpu/plans/plan.hpp"
#include "webgpu/plans/tuning.hpp"
#include "wgt/quant.hpp"

namespace wgt::webgpu {

enum class QMatmulKernel : uint8_t { Tiled, Stream, I8, SgMat };
// What the launcher does: run the planned kernel; or (tiled kernel) first run the prologue op
// into a scratch tensor and plan the plain product again; or the product into a scratch
// tensor and then an add kernel with the addend.
// RopeAppendUnfused (attrs.n_rot > 0, KVCache::rms_norm_qkv_append_rope where the epilogue
// cannot be fused): the product with its prologue, then kv_append_rope on its columns.
enum class QMatmulRoute : uint8_t { Kernel, PrologueFirst, AddAfter, RopeAppendUnfused };

// The fields that select the shader: the pipeline key is their bytes (no padding).
struct QMatmulShader {
  QMatmulKernel kernel = QMatmulKernel::Tiled;
  uint8_t qtype = 0;                  // a wgt::QType value
  uint8_t sg = 0;                     // matvec: subgroup reduction
  uint8_t norm = 0, silu = 0;         // matvec: fused RMSNorm / silu_mul prologue
  uint8_t add = 0;                    // matvec: the addend added as y is stored
  uint8_t x2 = 0;                     // I8: x held as two 8-bit terms
  uint8_t rows = 0, warps = 0;        // matvec: weight rows per warp, warps per workgroup
  uint8_t ksplit = 0;                 // matvec: warps sharing a set of rows
  uint8_t unroll = 0;                 // Stream: blocks per lane and loop trip
  uint8_t tile_t = 0;                 // Tiled: tile side factor T (16*T square tiles)
  uint16_t kc = 0;                    // I8: x elements staged per chunk
  uint16_t bm = 0, bn = 0;            // SgMat: workgroup tile (sgmat_core.wgsl)
  uint8_t bk = 0, fm = 0, fn = 0;     // SgMat: K chunk, fragments per subgroup
  uint8_t sm = 0, sn = 0, sk = 0;     // SgMat: the subgroup-matrix shape
  uint8_t sgs = 0;                    // SgMat: the adapter's (fixed) subgroup size
  uint8_t vec_out = 0;                // SgMat: N % 4 == 0, four columns per store
  uint8_t epi = 0;                    // matvec: the rope_append epilogue (q_mv_stream_sg)
  uint8_t epi_freqs = 0, cache_f16 = 0;  // epi: RoPE freq factors bound; f16 caches
  uint8_t pad = 0;
};

struct QMatmulPlan {
  QMatmulRoute route = QMatmulRoute::Kernel;
  QMatmulShader shader;
  bool compact_x = false;  // x is compacted first (not readable where it is)

  uint32_t group_rows() const;  // matvec: weight rows per workgroup
  PipelineKey key() const;      // the pipeline-cache key (cheap: a copy of `shader`)
  ShaderVariant variant() const;  // shader name and defines (built once per new pipeline)
  const char* kernel_name() const;  // "i8x2", "i8", "stream", "tiled" or "sgmat"
};

// The plan of `call`, or why WebGPU's quantized matmul cannot run it. Throws for a tuning
// value the device cannot honour (InvalidArgument: a KSPLIT not dividing the warps;
// Unsupported: more warps or staging than the device has).
Planned<QMatmulPlan> plan_qmatmul(const Caps& caps, const QMatvecTuning& tuning, const OpCall& call);

// The format's 8-element decoder shader (q*_decode), shared by the tiled kernel, dequantize
// and get_rows.
const char* qdecode_part(QType t);

constexpr int64_t kQMatvecMaxM = 4;     // above this many x rows the tiled kernel runs
constexpr uint32_t kQStreamLanes = 32;  // LANES of shaders/q_mv_stream_common.wgsl

}  // namespace wgt::webgpu
