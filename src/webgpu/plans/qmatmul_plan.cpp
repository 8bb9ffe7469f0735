// plan_qmatmul: what the quantized matmul kernels can run and the choice of kernel, warp shape
// and fusions (see qmatmul_plan.hpp). Pure. The defaults come from H200 sweeps whose figures
// are in BENCHMARKS.md and docs/quantization.md.
#include "webgpu/plans/qmatmul_plan.hpp"

#include <algorithm>

#include "quant/blocks.hpp"
#include "webgpu/plans/matmul_plan.hpp"
#include "webgpu/plans/rope_append.hpp"
#include "wgt/error.hpp"

namespace wgt::webgpu {
namespace {

// Extent of dim d of t (negative: from the end), 0 for a dim t lacks (the rank checks then
// reject the call). Cheaper than Tensor::size's checked lookup: plans run on every launch.
inline int64_t sz(const Tensor& t, int d) {
  const int i = d < 0 ? t.dim() + d : d;
  return i >= 0 && i < t.dim() ? t.shape()[static_cast<size_t>(i)] : 0;
}


// The format's shader parts: the 8-element decoder (q*_decode) of the tiled kernel, the f32-x
// lane part (q*_lane) and the 8-bit-x part (q*_i8, nullptr where the format has none).
struct QParts {
  const char* decode;
  const char* lane;
  const char* i8;
};
QParts parts_for(QType t) {
  switch (t) {
    case QType::Q8_0: return {"q8_0_decode", "q8_0_lane", "q8_0_i8"};
    case QType::Q4_0: return {"q4_0_decode", "q4_0_lane", "q4_0_i8"};
    case QType::Q4_1: return {"q4_1_decode", "q4_1_lane", nullptr};
    case QType::Q5_0: return {"q5_0_decode", "q5_0_lane", nullptr};
    case QType::Q5_1: return {"q5_1_decode", "q5_1_lane", nullptr};
    case QType::Q4_K: return {"q4_k_decode", "q4_k_lane", "q4_k_i8"};
    case QType::Q5_K: return {"q5_k_decode", "q5_k_lane", nullptr};
    case QType::Q6_K: return {"q6_k_decode", "q6_k_lane", "q6_k_i8"};
  }
  return {nullptr, nullptr, nullptr};
}

std::string check_qmatmul(const Limits& limits, const OpCall& c) {
  const bool norm = c.attrs.prologue == OpAttrs::Prologue::RmsNorm;
  const bool silu = c.attrs.prologue == OpAttrs::Prologue::SiluMul;
  // inputs: x, the packed weight, [the addend (attrs.has_bias)], [the prologue's operand (last):
  // the norm weight, or up]
  const bool add = c.attrs.has_bias;
  // The rope_append epilogue (attrs.n_rot > 0): the caches at inputs[2], [3][, factors at [4]].
  const bool epi = c.attrs.n_rot > 0;
  const size_t n_epi = epi ? 2u + (c.attrs.rope_factors ? 1u : 0u) : 0u;
  if (c.inputs.size() != 2u + (add ? 1u : 0u) + n_epi + (norm || silu ? 1u : 0u))
    return "qmatmul expects x, the packed weight, then the addend (or the two caches) and the prologue's operand where set";
  if (epi && (!norm || add)) return "the rope_append epilogue needs the RmsNorm prologue and no addend";
  if (norm && (c.inputs.back().dtype() != DType::F32 || c.inputs.back().dim() != 1 ||
               sz(c.inputs.back(), 0) != sz(c.inputs[0], -1)))
    return "the norm weight must be f32 [K]";
  if (silu && (c.inputs.back().dtype() != DType::F32 || c.inputs.back().shape() != c.inputs[0].shape()))
    return "up must be f32 with x's shape";
  if (add && (c.inputs[2].dtype() != DType::F32 || c.inputs[2].dim() != 2 || sz(c.inputs[2], 0) != sz(c.inputs[0], 0) ||
              !c.inputs[2].is_contiguous()))
    return "the addend must be a contiguous f32 [M, N]";
  if (c.attrs.qtype >= kNumQTypes) return "invalid qtype tag";
  const QType t = static_cast<QType>(c.attrs.qtype);
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  if (x.dtype() != DType::F32 || x.dim() != 2) return "x must be f32 [M, K]";
  if (w.dtype() != DType::U8 || w.dim() != 1 || !w.is_contiguous() || w.offset() != 0)
    return "packed weight must be a whole contiguous u8 buffer";
  // supports() runs before the output exists: N comes from the packed size.
  const int64_t M = sz(x, 0), K = sz(x, 1);
  const QTypeInfo& info = qtype_info(t);
  if (K == 0 || K % info.block_elems != 0) return "K is not a positive multiple of the block size";
  const int64_t rb = static_cast<int64_t>(K / info.block_elems * info.block_bytes);
  if (w.numel() % rb != 0) return "packed weight size is not a whole number of rows";
  const int64_t N = w.numel() / rb;
  if (epi)
    if (std::string why = check_rope_append(c, M, N); !why.empty()) return why;
  const uint64_t limit = limits.max_storage_buffer_binding_size;
  const uint64_t wbytes = static_cast<uint64_t>(w.numel()), xbytes = static_cast<uint64_t>(x.numel()) * 4;
  if (wbytes > limit || xbytes > limit || static_cast<uint64_t>(M) * static_cast<uint64_t>(std::max<int64_t>(N, 1)) * 4 > limit)
    return "an operand exceeds maxStorageBufferBindingSize";
  // The tiled prefill kernel uses a 2-D grid of 16*T square tiles (T >= 4).
  const uint64_t max_groups = limits.max_compute_workgroups_per_dimension;
  if (M > kQMatvecMaxM &&
      ((static_cast<uint64_t>(N) + 63) / 64 > max_groups || (static_cast<uint64_t>(M) + 63) / 64 > max_groups))
    return "too many tiles for one dispatch; split x or the weight";
  // Byte offsets are u32 in the shader.
  if (wbytes >= (uint64_t{1} << 32) || static_cast<uint64_t>(x.numel()) >= (uint64_t{1} << 32))
    return "operands above 4 GiB / 2^32 elements";
  return {};
}

// Tile side factor of q_matmul_tiled (tile = 16*T square, T x T outputs per invocation):
// 8 when the device has room for the two 32 x 129 f32 tiles (33 KB), else 4 (16.6 KB).
uint8_t tiled_t(const Limits& l) {
  const uint32_t need8 = 2 * 32 * (16 * 8 + 1) * 4;
  return l.max_compute_workgroup_storage_size >= need8 ? 8 : 4;
}

// Weight rows per warp of the f32-x matvec: each lane loads its x slice once per step and
// dots it with this many rows (x traffic divided by it, at the cost of accumulators and loads
// in flight). Q6_K's lane holds more state per row, so it takes fewer.
uint32_t default_stream_rows(QType t) { return t == QType::Q6_K ? 2 : 4; }
// The i8 kernels': one-term x takes fewer rows for the formats whose blocks cost the most per
// row (Q6_K, Q8_0); two-term x takes 8 as the upper bound, which i8_split lowers to fit the
// grid and the multiprocessor count.
uint32_t default_i8_rows(QType t, bool x2) {
  if (x2) return 8;
  return t == QType::Q6_K || t == QType::Q8_0 ? 2 : 4;
}
constexpr uint32_t kI8Warps = 8;      // more warps share one staging of x
constexpr uint32_t kStreamWarps = 4;  // warps per workgroup of the f32-x matvec
constexpr uint32_t kStreamUnroll = 2;  // blocks per lane and trip of the f32-x matvec

// Warps sharing a set of rows in the i8 kernels (KSPLIT), each taking every KSPLIT-th trip of
// the rows' units. Unless set, the split and the rows per warp adapt to the shape: a matvec
// with few rows has few workgroups, each lane running a long chain of dependent trips. While
// the grid is below kI8MinGroups workgroups, ROWS halves down to kI8AutoRowsFloor, then KSPLIT
// doubles up to kI8MaxAutoKsplit, then ROWS halves down to 1 (a value that is set is kept).
// Every workgroup quantizes the whole x row, so more workgroups than that cost time.
constexpr uint64_t kI8MinGroups = 192;
constexpr uint32_t kI8AutoRowsFloor = 4;
constexpr uint32_t kI8MaxAutoKsplit = 4;
// Then, for i8x2 with KSPLIT 1 where the adapter's multiprocessor count C is known
// (Limits::compute_units, or the `wave` tuning; 0 turns this off) and ROWS is not set: ROWS in
// [kI8AutoRowsFloor, ROWS] minimizing ceil(workgroups / C) * ROWS (the larger on a tie). Why:
// on the H200 each multiprocessor's share of the rows, not DRAM, sets the time (two of these
// workgroups share one SM's throughput, a third waits), so the time goes with the number of
// waves times the rows per workgroup.
// `step` is 2 where the rows must stay even (the rope_append epilogue's rotation pairs), else 1.
void i8_split(const QMatvecTuning& tu, uint32_t warps, uint32_t m, uint32_t n, bool x2, uint32_t wave, uint32_t step,
              uint32_t* rows, uint32_t* ksplit) {
  uint32_t k = tu.ksplit.value_or(1);
  if (k == 0 || warps % k != 0)
    throw_error(ErrorKind::InvalidArgument, "qmatmul_t",
                "WGT_QMATVEC_KSPLIT=" + std::to_string(k) + "; use 1, 2, 4 or 8, dividing the warps per workgroup (" +
                    std::to_string(warps) + ")");
  uint32_t r = *rows;
  auto groups_at = [&](uint32_t rr) {
    const uint64_t gr = uint64_t{warps} / k * rr;
    return uint64_t{m} * ((uint64_t{n} + gr - 1) / gr);
  };
  while (groups_at(r) < kI8MinGroups) {
    if (!tu.rows && r > kI8AutoRowsFloor) r /= 2;
    else if (!tu.ksplit && k < std::min(kI8MaxAutoKsplit, warps) && warps % (2 * k) == 0) k *= 2;
    else if (!tu.rows && r > step) r /= 2;
    else break;
  }
  if (x2 && wave > 0 && k == 1 && !tu.rows) {
    auto cost = [&](uint32_t rr) { return (groups_at(rr) + wave - 1) / wave * rr; };
    uint32_t best = r;
    for (uint32_t rr = r; rr >= kI8AutoRowsFloor; --rr)
      if (rr % step == 0 && cost(rr) < cost(best)) best = rr;
    r = best;
  }
  *rows = r;
  *ksplit = k;
}

// x elements per chunk of the 8-bit-x matvec (q_mv_stream_i8): the largest power of two up to
// 4096 whose staging (1 code byte, 2 with X2, per element + 8 bytes per group of 16) fits the
// workgroup memory next to the common reduction array (ROWS + NORM sums per invocation) and,
// with NORM, the ssq re-spread array.
uint32_t i8_chunk(const Limits& l, uint32_t rows, uint32_t warps, bool norm, bool x2) {
  const uint64_t wg = uint64_t{warps} * kQStreamLanes;
  const uint64_t fixed = (rows + (norm ? 1 : 0)) * wg * 4 + (norm ? wg * 4 : 4);
  for (uint32_t kc = 4096; kc >= 256; kc /= 2)  // a multiple of every block size
    if (fixed + kc * (x2 ? 2 : 1) + kc / 16 * 8 <= l.max_compute_workgroup_storage_size) return kc;
  throw_error(ErrorKind::Unsupported, "qmatmul_t",
              "the i8 matvec's staging does not fit the workgroup memory; use fewer WGT_QMATVEC_ROWS / WARPS");
}

// Rows of W (N) from the packed size; check_qmatmul has validated it.
int64_t weight_rows(const OpCall& c) {
  const QTypeInfo& info = qtype_info(static_cast<QType>(c.attrs.qtype));
  return c.inputs[1].numel() / (sz(c.inputs[0], 1) / info.block_elems * info.block_bytes);
}

// The subgroup-matrix prefill's tile (B staged K-contiguous: W's rows) where the adapter has
// f16 subgroup matrices and a default tile fits it; each invocation decodes whole octets of
// W, so the chunk's BN * BK / 8 octets must split evenly over the invocations.
std::string octet_problem(const SgTile& t, const SgMatShape& sh) {
  if (t.bk % 8) return "BK must be a multiple of 8";
  if ((t.bn * t.bk / 8) % (sgmat_subgroups(t, sh) * sh.subgroup)) return "BN*BK/8 must be a multiple of the invocation count";
  return {};
}
std::optional<SgTile> prefill_sgmat_tile(const Caps& caps, const QMatvecTuning& tu, const OpCall& c) {
  const std::optional<SgMatShape> sh = sgmat_shape(caps);
  if (!sh) return std::nullopt;
  if (tu.prefill_tile) {
    const auto& f = *tu.prefill_tile;
    const SgTile t{f[0], f[1], f[2], f[3], f[4]};
    std::string why = sgmat_tile_problem(caps.limits, t, *sh, true);
    if (why.empty()) why = octet_problem(t, *sh);
    if (!why.empty())
      throw_error(ErrorKind::InvalidArgument, "qmatmul_t",
                  "WGT_QMATMUL_SGMAT=" + std::to_string(f[0]) + "x" + std::to_string(f[1]) + "x" + std::to_string(f[2]) +
                      "x" + std::to_string(f[3]) + "x" + std::to_string(f[4]) + ": " + why);
    return t;
  }
  const uint64_t M = static_cast<uint64_t>(sz(c.inputs[0], 0)), N = static_cast<uint64_t>(weight_rows(c));
  std::optional<SgTile> t = sgmat_default_tile(caps.limits, *sh, true, M, N, 1);
  if (!t || !octet_problem(*t, *sh).empty()) return std::nullopt;
  return t;
}

void set_sgmat(QMatmulShader& s, const SgTile& t, const SgMatShape& sh, const OpCall& c) {
  s.kernel = QMatmulKernel::SgMat;
  s.bm = static_cast<uint16_t>(t.bm);
  s.bn = static_cast<uint16_t>(t.bn);
  s.bk = static_cast<uint8_t>(t.bk);
  s.fm = static_cast<uint8_t>(t.fm);
  s.fn = static_cast<uint8_t>(t.fn);
  s.sm = static_cast<uint8_t>(sh.m);
  s.sn = static_cast<uint8_t>(sh.n);
  s.sk = static_cast<uint8_t>(sh.k);
  s.sgs = static_cast<uint8_t>(sh.subgroup);
  s.vec_out = weight_rows(c) % 4 == 0;
}

}  // namespace

const char* qdecode_part(QType t) { return parts_for(t).decode; }

Planned<QMatmulPlan> plan_qmatmul(const Caps& caps, const QMatvecTuning& tu, const OpCall& c) {
  if (std::string why = check_qmatmul(caps.limits, c); !why.empty()) return Planned<QMatmulPlan>::no(std::move(why));
  Planned<QMatmulPlan> r;
  QMatmulPlan& p = r.plan;
  QMatmulShader& s = p.shader;
  const Limits& l = caps.limits;
  const QType t = static_cast<QType>(c.attrs.qtype);
  s.qtype = c.attrs.qtype;
  const Tensor& x = c.inputs[0];
  const bool matvec = sz(x, 0) <= kQMatvecMaxM;
  // The matvec fuses the prologue (x transformed as it is loaded) and the addend (added as y
  // is stored); for the tiled kernel the prologue runs first into a scratch tensor, and the
  // product goes to a scratch tensor that an add kernel sums with c.
  if (c.attrs.n_rot > 0 && !matvec) {  // (check_rope_append allows one row only)
    p.route = QMatmulRoute::RopeAppendUnfused;
    return r;
  }
  if (!matvec && c.attrs.prologue != OpAttrs::Prologue::None) {
    p.route = QMatmulRoute::PrologueFirst;
    return r;
  }
  if (!matvec && c.attrs.has_bias) {
    p.route = QMatmulRoute::AddAfter;
    return r;
  }
  // x is read where it is when compact; the matvec also reads a contiguous x at an offset that
  // is a multiple of 4 elements (a row of a larger tensor) in place.
  p.compact_x = !(x.is_contiguous() && (x.offset() == 0 || (matvec && x.offset() % 4 == 0)));
  if (!matvec) {
    if (std::optional<SgTile> tile = tu.prefill_sgmat ? prefill_sgmat_tile(caps, tu, c) : std::nullopt)
      set_sgmat(s, *tile, *sgmat_shape(caps), c);
    else {
      s.kernel = QMatmulKernel::Tiled;
      s.tile_t = tiled_t(l);
    }
    return r;
  }
  s.norm = c.attrs.prologue == OpAttrs::Prologue::RmsNorm;
  s.silu = c.attrs.prologue == OpAttrs::Prologue::SiluMul;
  s.add = c.attrs.has_bias;
  // The subgroup variant needs every subgroup inside one 32-lane row group.
  s.sg = tu.subgroups && caps.features.subgroups && l.subgroup_max_size > 0 && l.subgroup_max_size <= kQStreamLanes;
  const bool x2 = tu.kernel == QMatvecKernel::I8x2;
  // The i8 kernels need dot4I8Packed (a WGSL language feature every Dawn we know of has;
  // without it, as for the formats without an i8 part, the f32-x kernel runs).
  const bool i8 = tu.kernel != QMatvecKernel::Stream && parts_for(t).i8 != nullptr && caps.features.packed_dot &&
                  tu.packed_dot;
  uint32_t rows = tu.rows.value_or(i8 ? default_i8_rows(t, x2) : default_stream_rows(t));
  const uint32_t max_warps = l.max_compute_invocations_per_workgroup / kQStreamLanes;
  const uint32_t warps = tu.warps.value_or(i8 ? std::min(kI8Warps, max_warps) : kStreamWarps);
  if (warps * kQStreamLanes > l.max_compute_invocations_per_workgroup)
    throw_error(ErrorKind::Unsupported, "qmatmul_t",
                "WGT_QMATVEC_WARPS=" + std::to_string(warps) + " exceeds the device's invocations per workgroup; use fewer");
  uint32_t ksplit = 1;
  if (i8) {
    const uint32_t m = static_cast<uint32_t>(sz(x, 0));
    const int64_t K = sz(x, 1);
    const int64_t row_bytes = K / qtype_info(t).block_elems * qtype_info(t).block_bytes;
    const uint32_t n = static_cast<uint32_t>(c.inputs[1].numel() / row_bytes);
    i8_split(tu, warps, m, n, x2, tu.wave.value_or(l.compute_units), c.attrs.n_rot > 0 ? 2 : 1, &rows, &ksplit);
    s.kernel = QMatmulKernel::I8;
    s.x2 = x2;
    s.kc = static_cast<uint16_t>(i8_chunk(l, rows, warps, s.norm, x2));
    s.unroll = 1;
  } else {
    s.kernel = QMatmulKernel::Stream;
    s.unroll = static_cast<uint8_t>(tu.unroll.value_or(kStreamUnroll));
  }
  s.rows = static_cast<uint8_t>(rows);
  s.warps = static_cast<uint8_t>(warps);
  s.ksplit = static_cast<uint8_t>(ksplit);
  // The rope_append epilogue is fused where the subgroup reduction stores the rows (it hands
  // each odd row's value to the even lane below with a shuffle: subgroups of at least 2), the
  // warps' rows start even (ROWS even) and pairs are interleaved (not neox), with six storage
  // buffers (seven with the freq factors). Otherwise the product, then kv_append_rope.
  if (c.attrs.n_rot > 0) {
    const bool epi = s.sg && l.subgroup_min_size >= 2 && rows % 2 == 0 && !c.attrs.rope_neox && !s.silu && !s.add &&
                     l.max_storage_buffers_per_shader_stage >= (c.attrs.rope_factors ? 7u : 6u);
    if (!epi) {
      p = QMatmulPlan{};
      p.route = QMatmulRoute::RopeAppendUnfused;
      return r;
    }
    s.epi = 1;
    s.epi_freqs = c.attrs.rope_factors;
    s.cache_f16 = c.inputs[2].dtype() == DType::F16;
  }
  return r;
}

uint32_t QMatmulPlan::group_rows() const { return uint32_t{shader.warps} / shader.ksplit * shader.rows; }

PipelineKey QMatmulPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

const char* QMatmulPlan::kernel_name() const {
  switch (shader.kernel) {
    case QMatmulKernel::Tiled: return "tiled";
    case QMatmulKernel::Stream: return "stream";
    case QMatmulKernel::I8: return shader.x2 ? "i8x2" : "i8";
    case QMatmulKernel::SgMat: return "sgmat";
  }
  return "?";
}

ShaderVariant QMatmulPlan::variant() const {
  const QMatmulShader& s = shader;
  const QType t = static_cast<QType>(s.qtype);
  const QParts parts = parts_for(t);
  auto tf = [](bool v) -> std::string { return v ? "true" : "false"; };
  if (s.kernel == QMatmulKernel::Tiled)
    return ShaderVariant{"q_matmul_tiled",
                         {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", parts.decode}, {"T", std::to_string(s.tile_t)}}};
  if (s.kernel == QMatmulKernel::SgMat)
    return ShaderVariant{"q_matmul_sgmat",
                         {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", parts.decode},
                          {"BM", std::to_string(s.bm)}, {"BN", std::to_string(s.bn)}, {"BK", std::to_string(s.bk)},
                          {"FM", std::to_string(s.fm)}, {"FN", std::to_string(s.fn)}, {"SM", std::to_string(s.sm)},
                          {"SN", std::to_string(s.sn)}, {"SK", std::to_string(s.sk)}, {"SGS", std::to_string(s.sgs)},
                          {"B_KFAST", "true"}, {"O_MODE", s.vec_out ? "1" : "0"},
                          // sgmat_core's staged data path: W is decoded as it is staged.
                          {"SG_FETCH", "0"}, {"ABL", "0"}}};
  const bool i8 = s.kernel == QMatmulKernel::I8;
  const int g = s.norm || s.silu ? 1 : 0;
  ShaderVariant v{s.sg ? "q_mv_stream_sg" : "q_mv_stream",
                  {{"QCONST", quant::wgsl_block_constants(t)},
                   {"LANE", i8 ? parts.i8 : parts.lane},
                   {"I8", tf(i8)},
                   {"ROWS", std::to_string(s.rows)},
                   {"WARPS", std::to_string(s.warps)},
                   {"KSPLIT", std::to_string(s.ksplit)},
                   {"UNROLL", std::to_string(s.unroll)},
                   {"NORM", tf(s.norm)},
                   {"SILU", tf(s.silu)},
                   {"ADD", tf(s.add)},
                   {"C_BIND", std::to_string(3 + g)},
                   {"EPI", tf(s.epi)},
                   {"P_BIND", std::to_string(3 + g + int{s.add} + (s.epi ? 2 + s.epi_freqs : 0))}}};
  if (s.epi) {
    // The caches after g, then the freq factors (matmul_epi_rope_append.wgsl, rope_common).
    v.defines.push_back({"E_BIND", std::to_string(3 + g)});
    v.defines.push_back({"E_BIND1", std::to_string(4 + g)});
    v.defines.push_back({"CACHE_F16", tf(s.cache_f16)});
    v.defines.push_back({"ROPE_FREQS", s.epi_freqs ? "rope_freq_buffer" : "rope_freq_none"});
    if (s.epi_freqs) {
      v.defines.push_back({"FREQ_BIND", std::to_string(5 + g)});
      v.defines.push_back({"FREQ_OFF", "p.r_f_off"});
    }
  }
  if (i8) {
    v.defines.push_back({"KC", std::to_string(s.kc)});
    v.defines.push_back({"X2", tf(s.x2)});
  }
  return v;
}

}  // namespace wgt::webgpu
