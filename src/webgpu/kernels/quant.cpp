// Launchers of the quantized kernels on WebGPU, every GGUF format (Q8_0, Q4_0, Q4_1, Q4_K,
// Q5_K, Q6_K): y = x W^T (OpKind::QMatMul; for small M q_mv_stream[_sg] over the format's
// q*_i8 part with 8-bit x (default) or its q*_lane with weights read directly or staged
// through workgroup memory, or
// q_mv_xstat[_sg] over the same q*_lane with x held in registers, or q_matvec[_sg] over its
// q*_dot; q_matmul_tiled over its q*_decode for prefill), dequantize (OpKind::QDequantize;
// q_dequant) and the embedding lookup (OpKind::QGetRows; q_get_rows). Weights stay packed in
// their device buffers; the block constants are injected from src/quant/blocks.hpp (QCONST
// define), never retyped, and the format's shader parts are picked by the DOT/DECODE defines.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

#include "quant/blocks.hpp"
#include "runtime/settings.hpp"
#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

// Weight rows per matvec workgroup: x is loaded once per work item and reused for these
// rows. 4 is a first guess (not tuned on a real GPU yet).
constexpr uint32_t kRowsPerGroup = 4;
// Above this many x rows the tiled kernel (W decoded once per 16*T rows of x) replaces the
// matvec one (W streamed once per x row).
constexpr int64_t kMatvecMaxM = 4;

// Mirrors `struct Params` of shaders/q_mv_stream_common.wgsl; the other quantized matmul
// shaders declare only its first four fields (a larger uniform buffer is fine).
struct QParams {
  uint32_t m, n, k, row_bytes;
  uint32_t g_off4, eps_bits;  // the fused RMSNorm prologue of the streaming matvec
  uint32_t c_off;             // the addend's element offset (its fused epilogue)
  uint32_t x_off4;            // x's offset in vec4 units (streaming matvec; 0 elsewhere)
};
static_assert(sizeof(QParams) == 32, "QParams must match the WGSL Params layout");

// Shader parts of each format: the matvec work item (q*_dot), the 8-element decoder
// (q*_decode) shared by dequantize, get_rows and the tiled prefill matmul, and the lane part
// of the streaming matvec (q*_lane; nullptr where the format has none yet).
struct QKernels {
  const char* dot;
  const char* decode;
  const char* lane;
  const char* i8;  // the 8-bit-x matvec part (q*_i8), nullptr where the format has none
};
QKernels kernels_for(QType t) {
  switch (t) {
    case QType::Q8_0: return {"q8_0_dot", "q8_0_decode", "q8_0_lane", "q8_0_i8"};
    case QType::Q4_0: return {"q4_0_dot", "q4_0_decode", "q4_0_lane", "q4_0_i8"};
    case QType::Q4_1: return {"q4_1_dot", "q4_1_decode", "q4_1_lane", nullptr};
    case QType::Q4_K: return {"q4_k_dot", "q4_k_decode", "q4_k_lane", "q4_k_i8"};
    case QType::Q5_K: return {"q5_k_dot", "q5_k_decode", "q5_k_lane", nullptr};
    case QType::Q6_K: return {"q6_k_dot", "q6_k_decode", "q6_k_lane", "q6_k_i8"};
  }
  return {nullptr, nullptr, nullptr, nullptr};
}

// Mirrors `struct Params` of shaders/q_dequant.wgsl.
struct QDeqParams {
  uint32_t rows, cols, row_bytes, pad;
};
static_assert(sizeof(QDeqParams) == 16, "QDeqParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_get_rows.wgsl.
struct QGetRowsParams {
  uint32_t n_ids, cols, row_bytes, rows, nan_bits, flag, pad1, pad2;
};
static_assert(sizeof(QGetRowsParams) == 32, "QGetRowsParams must match the WGSL Params layout");

// Shared by QDequantize (inputs {bytes}) and QGetRows (inputs {bytes, ids i32 [n]}).
Support check_qdequantize(const Context& ctx, const OpCall& c) {
  const size_t n_in = c.kind == OpKind::QGetRows ? 2 : 1;
  if (c.inputs.size() != n_in) return Support::no(c.name + " expects " + std::to_string(n_in) + " input(s)");
  if (n_in == 2 && (c.inputs[1].dtype() != DType::I32 || c.inputs[1].dim() != 1))
    return Support::no("ids must be a 1-D i32 tensor on the device");
  if (c.attrs.qtype >= kNumQTypes) return Support::no("invalid qtype tag");
  const QType t = static_cast<QType>(c.attrs.qtype);
  const Tensor& w = c.inputs[0];
  if (w.dtype() != DType::U8 || w.dim() != 2 || !w.is_contiguous() || w.offset() != 0)
    return Support::no("packed weight must be a whole contiguous u8 [rows, row_bytes] buffer");
  const QTypeInfo& info = qtype_info(t);
  if (w.size(1) % info.block_bytes != 0) return Support::no("row bytes are not a whole number of blocks");
  const uint64_t out_rows = static_cast<uint64_t>(n_in == 2 ? c.inputs[1].numel() : w.size(0));
  const uint64_t elems = out_rows * static_cast<uint64_t>(w.size(1) / info.block_bytes) * info.block_elems;
  const uint64_t limit = ctx.limits().max_storage_buffer_binding_size;
  if (static_cast<uint64_t>(w.numel()) > limit || elems * 4 > limit) return Support::no("an operand exceeds maxStorageBufferBindingSize");
  if (elems >= (uint64_t{1} << 32) || static_cast<uint64_t>(w.numel()) >= (uint64_t{1} << 32))
    return Support::no("operands above 4 GiB / 2^32 elements");
  return Support::yes();
}

void launch_qdequantize(Context& ctx, OpCall& c) {
  const QType t = static_cast<QType>(c.attrs.qtype);
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor& y = c.outputs[0];
  QDeqParams p{};
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  const uint64_t threads = uint64_t{p.rows} * (p.cols / 8);  // one invocation per 8 elements
  if (threads == 0) return;
  Dispatch d;
  static const char family = 0;
  d.pipeline = ctx.pipeline(VariantId{&family, static_cast<uint64_t>(t), 0}, [&] {
    return ShaderVariant{"q_dequant", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", kernels_for(t).decode}}};
  });
  d.args = {ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

Support check_qmatmul(const Context& ctx, const OpCall& c) {
  const bool norm = c.attrs.prologue == OpAttrs::Prologue::RmsNorm;
  const bool silu = c.attrs.prologue == OpAttrs::Prologue::SiluMul;
  // inputs: x, the packed weight, [the addend (attrs.has_bias)], [the prologue's operand (last):
  // the norm weight, or up]
  const bool add = c.attrs.has_bias;
  if (c.inputs.size() != 2u + (add ? 1u : 0u) + (norm || silu ? 1u : 0u))
    return Support::no("qmatmul expects x, the packed weight, then the addend and the prologue's operand where set");
  if (norm && (c.inputs.back().dtype() != DType::F32 || c.inputs.back().dim() != 1 ||
               c.inputs.back().size(0) != c.inputs[0].size(-1)))
    return Support::no("the norm weight must be f32 [K]");
  if (silu && (c.inputs.back().dtype() != DType::F32 || c.inputs.back().shape() != c.inputs[0].shape()))
    return Support::no("up must be f32 with x's shape");
  if (add && (c.inputs[2].dtype() != DType::F32 || c.inputs[2].dim() != 2 || c.inputs[2].size(0) != c.inputs[0].size(0) ||
              !c.inputs[2].is_contiguous()))
    return Support::no("the addend must be a contiguous f32 [M, N]");
  if (c.attrs.qtype >= kNumQTypes) return Support::no("invalid qtype tag");
  const QType t = static_cast<QType>(c.attrs.qtype);
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  if (x.dtype() != DType::F32 || x.dim() != 2) return Support::no("x must be f32 [M, K]");
  if (w.dtype() != DType::U8 || w.dim() != 1 || !w.is_contiguous() || w.offset() != 0)
    return Support::no("packed weight must be a whole contiguous u8 buffer");
  // supports() runs before the output exists: N comes from the packed size.
  const int64_t M = x.size(0), K = x.size(1);
  const QTypeInfo& info = qtype_info(t);
  if (K == 0 || K % info.block_elems != 0) return Support::no("K is not a positive multiple of the block size");
  const int64_t rb = static_cast<int64_t>(K / info.block_elems * info.block_bytes);
  if (w.numel() % rb != 0) return Support::no("packed weight size is not a whole number of rows");
  const int64_t N = w.numel() / rb;
  const uint64_t limit = ctx.limits().max_storage_buffer_binding_size;
  const uint64_t wbytes = static_cast<uint64_t>(w.numel()), xbytes = static_cast<uint64_t>(x.numel()) * 4;
  if (wbytes > limit || xbytes > limit || static_cast<uint64_t>(M) * static_cast<uint64_t>(std::max<int64_t>(N, 1)) * 4 > limit)
    return Support::no("an operand exceeds maxStorageBufferBindingSize");
  // The tiled prefill kernel uses a 2-D grid of 16*T square tiles (T >= 4).
  const uint64_t max_groups = ctx.limits().max_compute_workgroups_per_dimension;
  if (M > kMatvecMaxM && ((static_cast<uint64_t>(N) + 63) / 64 > max_groups || (static_cast<uint64_t>(M) + 63) / 64 > max_groups))
    return Support::no("too many tiles for one dispatch; split x or the weight");
  // Byte offsets are u32 in the shader.
  if (wbytes >= (uint64_t{1} << 32) || static_cast<uint64_t>(x.numel()) >= (uint64_t{1} << 32))
    return Support::no("operands above 4 GiB / 2^32 elements");
  return Support::yes();
}

// Tile side factor of q_matmul_tiled (tile = 16*T square, T x T outputs per invocation):
// 8 when the device has room for the two 32 x 129 f32 tiles (33 KB), else 4 (16.6 KB).
uint32_t tiled_t(const Context& ctx) {
  const uint32_t need8 = 2 * 32 * (16 * 8 + 1) * 4;
  return ctx.limits().max_compute_workgroup_storage_size >= need8 ? 8 : 4;
}

// WGT_QMATVEC_SUBGROUPS=off forces the workgroup-reduction matvec on a device with subgroups
// (to compare the two, and so that tests cover the fallback on lavapipe, which has them).
// The knobs of this file come from runtime/settings.hpp, parsed once (tests and benches that
// change them call settings_reload()).
bool use_subgroups(const Context& ctx) { return *settings().qmatvec_subgroups && ctx.features().subgroups; }

constexpr uint32_t kStreamLanes = 32;  // LANES of shaders/q_mv_stream_common.wgsl

// The M <= 4 kernel, WGT_QMATVEC_KERNEL:
// - `i8x2` (default) / `i8`: the streaming matvec with x quantized per 16 values into two /
//   one 8-bit terms and packed integer dot products (q_mv_stream_i8 over the format's q*_i8
//   part: Q4_0, Q8_0, Q4_K, Q6_K; `stream` for the other formats and where the WGSL feature
//   packed_4x8_integer_dot_product is missing). Results differ from the CPU's f32-x product by
//   the rounding of x, within the bounds in docs/quantization.md: about f16 precision for
//   i8x2 (the default: 1.1-1.6x faster than `stream` on the H200, BENCHMARKS.md run 8), up to
//   ~0.4% of a row's largest output for i8 (the fastest: 1.3-2x).
// - `stream`: the streaming matvec with f32 x and direct scalar loads (the f32-x result).
// - `staged`: `stream` with each warp's weight bytes staged through workgroup memory by vec4
//   loads, where rows are 16-byte aligned and the staging fits, else `stream` (slower on the
//   H200, run 7).
// - `xstat`: q_mv_xstat[_sg], x held in registers while the workgroup sweeps its rows, where K
//   fits, else `stream`.
// - `items`: q_matvec[_sg], one block per invocation.
// All on the same build, so that they can be compared.
enum class MatvecKernel { Staged, Stream, Xstat, Items, I8, I8x2 };
const char* matvec_kernel_name(MatvecKernel k) {
  switch (k) {
    case MatvecKernel::Staged: return "staged";
    case MatvecKernel::Stream: return "stream";
    case MatvecKernel::Xstat: return "xstat";
    case MatvecKernel::Items: return "items";
    case MatvecKernel::I8: return "i8";
    case MatvecKernel::I8x2: return "i8x2";
  }
  return "?";
}
MatvecKernel requested_matvec_kernel() {
  const char* v = *settings().qmatvec_kernel;  // one of the names below (settings.cpp), or null
  for (MatvecKernel k : {MatvecKernel::Staged, MatvecKernel::Stream, MatvecKernel::Xstat, MatvecKernel::Items,
                         MatvecKernel::I8, MatvecKernel::I8x2})
    if (v && std::strcmp(v, matvec_kernel_name(k)) == 0) return k;
  return MatvecKernel::I8x2;
}

// Which matvec kernel the last M <= 4 qmatmul_t recorded (the fallbacks from `staged` and
// `xstat` are silent, so the tests ask here). Declared where used (tests); not part of the API.
thread_local const char* g_last_matvec_kernel = "";
// Whether that launch fused an RMSNorm prologue (test hook below).
thread_local bool g_last_matvec_norm = false;
// Whether it added the addend in its epilogue / fused a silu_mul prologue (test hooks below).
thread_local bool g_last_matvec_add = false;
thread_local bool g_last_matvec_silu = false;
// (ROWS, KSPLIT) of that launch (test hook below).
thread_local std::pair<uint32_t, uint32_t> g_last_matvec_split{0, 0};

// A WGT_QMATVEC_* knob (range-checked by runtime/settings.cpp), `dflt` when unset.
uint32_t knob(const Setting<std::optional<uint32_t>>& s, uint32_t dflt) { return s->value_or(dflt); }

// Weight rows per warp of the streaming matvec: each lane loads its x slice once per step
// and dots it with this many rows (x traffic from L1 divided by it, R accumulators and R
// sets of weight loads per lane). WGT_QMATVEC_ROWS=1..8. Defaults from the H200 sweep of
// BENCHMARKS.md run 7 (14336 x 4096, direct loads): 4 for every format (Q4_0 22.5 us vs 24.9
// at 2 and 27.1 at 8; Q4_K and Q8_0 about even at 2 and 4) except Q6_K, whose lane holds
// more state per row: 2 (44.2 us vs 50.5 at 4 and 70.1 at 8).
uint32_t default_stream_rows(QType t) { return t == QType::Q6_K ? 2 : 4; }
// The i8 kernels' defaults, from the H200 sweeps of BENCHMARKS.md run 8 (14336 x 4096): 8 warps
// (the x staging is shared by more rows: i8 Q4_0 11.4 us vs 14.4 at 4 warps); i8 ROWS 4 (Q4_0,
// Q4_K) or 2 (Q8_0 21.5 vs 23.8 us at 8; Q6_K 23.5 vs 24.7); i8x2 ROWS 8 for every format
// (Q4_0 14.4 us vs 15.0 at 4, Q4_K 18.3 vs 21.6, Q6_K 27.7 vs 28.6, Q8_0 24.2 vs 25.9), as the
// upper bound: i8_split lowers it for small grids and, where the multiprocessor count is known,
// to the cheapest number of waves (run 12: 7 at 14336 x 4096 on the H200).
uint32_t default_i8_rows(QType t, bool x2) {
  if (x2) return 8;
  return t == QType::Q6_K || t == QType::Q8_0 ? 2 : 4;
}
constexpr uint32_t kI8Warps = 8;
// Warps sharing a set of rows in the i8 kernels (q_mv_stream_common's KSPLIT), each taking
// every KSPLIT-th trip of the rows' units. WGT_QMATVEC_KSPLIT=1, 2, 4 or 8, dividing the warps.
// Unless set, the split and the rows per warp adapt to the shape: a matvec with few rows has
// few workgroups of WARPS / KSPLIT * ROWS rows, each lane running a long chain of dependent
// trips. While the grid is below kI8MinGroups workgroups, ROWS halves down to kI8AutoRowsFloor,
// then KSPLIT doubles up to kI8MaxAutoKsplit, then ROWS halves down to 1 (a knob that is set is
// kept). Every workgroup quantizes the whole x row, so more workgroups than that cost time.
// From the H200 sweeps of BENCHMARKS.md run 10 (K = 4096): with 8 warps the best i8x2 shapes had
// 224-256 workgroups from N = 2048 to 14336 (N = 8192: ROWS 4, Q4_0 10.7 us vs 12.9 at ROWS 8;
// N = 4096: ROWS 4 KSPLIT 2, Q6_K 11.5 vs 13.0; N = 14336: ROWS 8, 224 workgroups), and
// splitting further at N = 1024 gained little. 192 keeps N = 14336 at ROWS 8 and takes N = 8192
// to ROWS 4.
constexpr uint64_t kI8MinGroups = 192;
constexpr uint32_t kI8AutoRowsFloor = 4;
constexpr uint32_t kI8MaxAutoKsplit = 4;
// Then, for i8x2 with KSPLIT 1, where the adapter's multiprocessor count C is known
// (Limits::compute_units, or WGT_QMATVEC_WAVE=C; 0 turns this off) and ROWS is not set: ROWS
// in [kI8AutoRowsFloor, ROWS] minimizing ceil(workgroups / C) * ROWS (the larger on a tie).
// Why: on the H200 each SM's share of the rows, not DRAM, sets the time (two of these
// workgroups run on an SM at once and share its throughput, a third waits: BENCHMARKS.md run
// 13), so it goes with the number of waves times the rows per workgroup (run 12: at
// N = 14336, ROWS 8 = 224 workgroups, two waves of 64 rows, Q4_0 17.5 us; ROWS 7 = 256, two
// waves of 56 rows, 14.1; ROWS 6 = 299, three of 48, 18.2; the model orders ROWS 4-8 as
// measured at N = 11008, 12672, 14336 and 16960).
uint32_t qmatvec_wave(const Context& ctx) { return knob(settings().qmatvec_wave, ctx.limits().compute_units); }
void i8_split(uint32_t warps, uint32_t m, uint32_t n, bool x2, uint32_t wave, uint32_t* rows, uint32_t* ksplit) {
  const Settings& s = settings();
  const bool k_set = s.qmatvec_ksplit->has_value(), rows_set = s.qmatvec_rows->has_value();
  uint32_t k = knob(s.qmatvec_ksplit, 1);  // 1, 2, 4 or 8 (settings.cpp)
  if (warps % k != 0)
    throw_error(ErrorKind::InvalidArgument, "qmatmul_t",
                "WGT_QMATVEC_KSPLIT=" + std::to_string(k) + "; use 1, 2, 4 or 8, dividing the warps per workgroup (" +
                    std::to_string(warps) + ")");
  uint32_t r = *rows;
  auto groups_at = [&](uint32_t rr) { const uint64_t gr = uint64_t{warps} / k * rr; return uint64_t{m} * ((uint64_t{n} + gr - 1) / gr); };
  while (groups_at(r) < kI8MinGroups) {
    if (!rows_set && r > kI8AutoRowsFloor) r /= 2;
    else if (!k_set && k < std::min(kI8MaxAutoKsplit, warps) && warps % (2 * k) == 0) k *= 2;
    else if (!rows_set && r > 1) r /= 2;
    else break;
  }
  if (x2 && wave > 0 && k == 1 && !rows_set) {
    auto cost = [&](uint32_t rr) { return (groups_at(rr) + wave - 1) / wave * rr; };
    uint32_t best = r;
    for (uint32_t rr = r; rr >= kI8AutoRowsFloor; --rr)
      if (cost(rr) < cost(best)) best = rr;
    r = best;
  }
  *rows = r;
  *ksplit = k;
}
// Warps (of 32 invocations) per workgroup; a workgroup covers WARPS * ROWS rows.
// WGT_QMATVEC_WARPS=1..8 (at most the device's invocations per workgroup / 32).
constexpr uint32_t kStreamWarps = 4;
// Blocks per lane per trip of the main loop (UNROLL * ROWS weight loads in flight per
// lane). WGT_QMATVEC_UNROLL=1, 2, 4 or 8.
constexpr uint32_t kStreamUnroll = 2;
// The staged kernel's UNROLL default: its trips are already pipelined (the next trip's vec4
// loads are in flight while one decodes), and one block per lane keeps the staging buffers
// of the default 4 x 4 rows small (Q4_0: 2 x 4.5 KiB). A guess pending the H200 sweep.
constexpr uint32_t kStagedUnroll = 1;

// The q*_lane shaders' SLOTS (lanes per block), needed here to size the staging buffers; the
// staged shader const_asserts that its trip is whole vec4s, so a mismatch fails loudly.
uint32_t lane_slots(QType t) {
  switch (t) {
    case QType::Q8_0: case QType::Q4_0: case QType::Q4_1: return 2;
    case QType::Q4_K: case QType::Q5_K: case QType::Q6_K: return 16;
  }
  return 0;
}

uint32_t stream_unroll(uint32_t dflt) {
  return knob(settings().qmatvec_unroll, dflt);  // 1, 2, 4 or 8 (settings.cpp)
}

uint32_t stream_warps(const Context& ctx, uint32_t dflt = kStreamWarps) {
  const uint32_t wp = knob(settings().qmatvec_warps, dflt);
  if (wp * kStreamLanes > ctx.limits().max_compute_invocations_per_workgroup)
    throw_error(ErrorKind::Unsupported, "qmatmul_t",
                "WGT_QMATVEC_WARPS=" + std::to_string(wp) + " exceeds the device's invocations per workgroup; use fewer");
  return wp;
}

// Shape of a staged matvec pipeline, or why the direct kernel runs instead.
struct StagedPlan {
  bool ok = false;
  uint32_t unroll = 0, nbuf = 0;
};

// The staged kernel applies when rows start 16-byte aligned (the binding is at offset 0:
// check_qmatmul) and its staging buffers fit the workgroup memory: per buffer
// WARPS * ROWS * TRIP blocks, TRIP = 32 / SLOTS * UNROLL, UNROLL doubled until a trip is whole
// 16-byte words (Q6_K: 210-byte blocks, 2 per step -> 4 steps = 8 blocks = 1680 bytes).
// WGT_QMATVEC_STAGE_BUFFERS=1|2 (default: 2 where it fits, else 1): 2 overlaps the next trip's
// stores with this trip's decode (one barrier per trip), 1 halves the memory (two barriers).
// An explicit value that does not fit is an Unsupported error; a default that does not fit
// falls back to the direct kernel.
StagedPlan plan_staged(const Context& ctx, QType t, uint32_t row_bytes, uint32_t rows, uint32_t warps, uint32_t unroll) {
  StagedPlan p;
  const uint32_t forced = knob(settings().qmatvec_stage_buffers, 0);  // read (so checked) even when unused
  if (row_bytes % 16 != 0) return p;
  const uint32_t bb = static_cast<uint32_t>(qtype_info(t).block_bytes);
  const uint32_t stride = kStreamLanes / lane_slots(t);
  while ((stride * unroll * bb) % 16 != 0) unroll *= 2;  // at most x8: 16 / gcd(bb, 16)
  const uint64_t span = uint64_t{stride} * unroll * bb;    // bytes per row and trip
  const uint64_t red = uint64_t{rows} * warps * kStreamLanes * 4;
  const uint64_t limit = ctx.limits().max_compute_workgroup_storage_size;
  auto fits = [&](uint32_t nbuf) { return nbuf * warps * rows * span + red <= limit; };
  if (forced != 0) {
    if (!fits(forced))
      throw_error(ErrorKind::Unsupported, "qmatmul_t",
                  "WGT_QMATVEC_STAGE_BUFFERS=" + std::to_string(forced) + " needs " +
                      std::to_string(forced * warps * rows * span + red) + " bytes of workgroup memory, the device has " +
                      std::to_string(limit) + "; use 1 buffer or fewer WGT_QMATVEC_ROWS / WARPS / UNROLL");
    p.nbuf = forced;
  } else {
    p.nbuf = fits(2) ? 2 : fits(1) ? 1 : 0;
    if (p.nbuf == 0) return p;
  }
  p.ok = true;
  p.unroll = unroll;
  return p;
}

// x elements per chunk of the 8-bit-x matvec (q_mv_stream_i8): the largest power of two up to
// 4096 whose staging (1 code byte, 2 with X2, per element + 8 bytes per group of
// 16) fits the workgroup memory
// next to the common reduction array (ROWS + NORM sums per invocation) and, with NORM, the
// ssq re-spread array.
uint32_t i8_chunk(const Context& ctx, uint32_t rows, uint32_t warps, bool norm, bool x2) {
  const uint64_t wg = uint64_t{warps} * kStreamLanes;
  const uint64_t fixed = (rows + (norm ? 1 : 0)) * wg * 4 + (norm ? wg * 4 : 4);
  const uint64_t limit = ctx.limits().max_compute_workgroup_storage_size;
  for (uint32_t kc = 4096; kc >= 256; kc /= 2)  // a multiple of every block size
    if (fixed + kc * (x2 ? 2 : 1) + kc / 16 * 8 <= limit) return kc;
  throw_error(ErrorKind::Unsupported, "qmatmul_t",
              "the i8 matvec's staging does not fit the workgroup memory; use fewer WGT_QMATVEC_ROWS / WARPS");
}

// The x-stationary matvec (q_mv_xstat[_sg]). A step is 32 / SLOTS blocks = 512 elements in
// every format, so a row of K has ceil(K / 512) steps: K = 4096 -> 8, 11008 -> 22 (the last
// half), 14336 -> 28. Each warp holds the x slices of at most kXstatMaxSteps steps in
// registers (LaneX: 16-20 floats each), so with the default 8 warps K <= 16384 fits (the
// three above: 1, 3 and 4 steps per lane); larger K runs the streaming kernel.
// WGT_QMATVEC_WARPS (default here: 8, or nsteps when fewer), WGT_QMATVEC_XSTAT_ROWS=1..64 rows per workgroup
// (default 16: N = 4096 gives 256 workgroups per x row, 14336 gives 896),
// WGT_QMATVEC_XSTAT_BATCH=1..8 rows per batch (default 4: accumulators per lane, loads in
// flight, one barrier per batch). Guesses, not measured on a GPU.
constexpr uint32_t kXstatMaxSteps = 4;
constexpr uint32_t kXstatWarps = 8;
constexpr uint32_t kXstatRows = 16;
constexpr uint32_t kXstatBatch = 4;

// Sets d.pipeline and the grid of the x-stationary matvec and returns true, or returns false
// (nothing set) when K has more steps than the workgroup's registers hold.
bool plan_xstat(Context& ctx, Dispatch& d, QType t, const QParams& p, bool sg) {
  const uint32_t group_rows = knob(settings().qmatvec_xstat_rows, kXstatRows);
  const uint32_t rb = std::min(knob(settings().qmatvec_xstat_batch, kXstatBatch), group_rows);
  const uint32_t nb = p.k / static_cast<uint32_t>(qtype_info(t).block_elems);
  const uint32_t stride = kStreamLanes / lane_slots(t);  // blocks per step
  const uint32_t nsteps = (nb + stride - 1) / stride;
  // Default: no more warps than steps (a warp without steps only joins the reductions), and
  // no more than the device takes (WebGPU guarantees 256 invocations, i.e. 8 warps).
  const uint32_t max_warps = ctx.limits().max_compute_invocations_per_workgroup / kStreamLanes;
  const uint32_t warps = stream_warps(ctx, std::max(1u, std::min({kXstatWarps, max_warps, nsteps})));
  if (nsteps > warps * kXstatMaxSteps) return false;
  // red: 2 buffers of RB * WG floats, at most 2 * 8 * 256 * 4 = 16 KiB (WebGPU's minimum).
  // The variant's id: one byte per small parameter (WARPS <= 8, GROUP_ROWS <= 64, RB <= 8), NB in b.
  static const char family = 0;
  const VariantId id{&family,
                     static_cast<uint64_t>(t) | uint64_t{sg} << 8 | uint64_t{warps} << 16 | uint64_t{group_rows} << 24 |
                         uint64_t{rb} << 32,
                     nb};
  d.pipeline = ctx.pipeline(id, [&] {
    return ShaderVariant{sg ? "q_mv_xstat_sg" : "q_mv_xstat",
                         {{"QCONST", quant::wgsl_block_constants(t)},
                          {"LANE", kernels_for(t).lane},
                          {"WARPS", std::to_string(warps)},
                          {"GROUP_ROWS", std::to_string(group_rows)},
                          {"RB", std::to_string(rb)},
                          {"NB", std::to_string(nb)}}};
  });
  // one workgroup per (x row, group_rows weight rows)
  auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + group_rows - 1) / group_rows));
  d.groups_x = gx;
  d.groups_y = gy;
  return true;
}

void launch_qmatmul(Context& ctx, OpCall& c) {
  const QType t = static_cast<QType>(c.attrs.qtype);
  const bool norm = c.attrs.prologue == OpAttrs::Prologue::RmsNorm;
  const bool silu = c.attrs.prologue == OpAttrs::Prologue::SiluMul;
  const MatvecKernel want_kernel = requested_matvec_kernel();
  // The streaming matvec (M <= 4) fuses the prologue (x transformed as it is loaded) and the
  // addend (added as y is stored); for the other kernels the prologue runs first into a
  // scratch tensor, and the product goes to a scratch tensor that an add kernel sums with c.
  const bool stream_family = c.inputs[0].size(0) <= kMatvecMaxM &&
                             (want_kernel == MatvecKernel::Stream || want_kernel == MatvecKernel::Staged ||
                              want_kernel == MatvecKernel::I8 || want_kernel == MatvecKernel::I8x2);
  const bool fuse_norm = norm && stream_family, fuse_silu = silu && stream_family;
  if ((norm || silu) && !stream_family) {
    OpCall plain = ctx.run_prologue(c);
    launch_qmatmul(ctx, plain);
    return;
  }
  const bool fuse_add = c.attrs.has_bias && stream_family;
  if (c.attrs.has_bias && !fuse_add) {
    OpCall plain = c;
    plain.inputs.erase(plain.inputs.begin() + 2);
    plain.attrs.has_bias = false;
    plain.outputs = {ctx.scratch(c.outputs[0].shape(), DType::F32)};
    launch_qmatmul(ctx, plain);
    OpCall sum{OpKind::Binary, "add", {plain.outputs[0], c.inputs[2]}, {c.outputs[0]}, {}};
    sum.attrs.binary = BinaryOp::Add;
    ctx.run_op(sum);
    return;
  }
  // x as is when already compact (a Tensor copy costs two vector allocations); the streaming
  // matvec also reads a contiguous x at an offset that is a multiple of 4 elements (a row of
  // a larger tensor) in place.
  const Tensor& x0 = c.inputs[0];
  const bool x_in_place = x0.is_contiguous() && (x0.offset() == 0 || (stream_family && x0.offset() % 4 == 0));
  const Tensor x_copy = x_in_place ? Tensor() : ctx.compact(x0);
  const Tensor& x = x_copy.defined() ? x_copy : x0;
  const Tensor& w = c.inputs[1];
  const Tensor& y = c.outputs[0];
  QParams p{};
  p.m = static_cast<uint32_t>(x.size(0));
  p.k = static_cast<uint32_t>(x.size(1));
  p.n = static_cast<uint32_t>(y.size(1));
  p.row_bytes = static_cast<uint32_t>(qtype_row_bytes(t, p.k, "qmatmul_t"));
  p.x_off4 = static_cast<uint32_t>(x.offset() / 4);  // non-zero only for the streaming matvec
  if (uint64_t{p.m} * p.n == 0) return;
  Dispatch d;
  d.args = {ctx.arg(x, true), ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  if (p.m > kMatvecMaxM) {
    const uint32_t tt = tiled_t(ctx);
    static const char family = 0;
    d.pipeline = ctx.pipeline(VariantId{&family, static_cast<uint64_t>(t), tt}, [&] {
      return ShaderVariant{"q_matmul_tiled",
                           {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", kernels_for(t).decode}, {"T", std::to_string(tt)}}};
    });
    d.groups_x = (p.n + 16 * tt - 1) / (16 * tt);
    d.groups_y = (p.m + 16 * tt - 1) / (16 * tt);
    ctx.dispatch(d);
    return;
  }
  const MatvecKernel want = want_kernel;
  g_last_matvec_norm = false;
  g_last_matvec_add = false;
  g_last_matvec_silu = false;
  if (want != MatvecKernel::Items) {
    // The subgroup variant needs every subgroup inside one 32-lane row group.
    const uint32_t sg_max = ctx.limits().subgroup_max_size;
    const bool sg = use_subgroups(ctx) && sg_max > 0 && sg_max <= kStreamLanes;
    if (want == MatvecKernel::Xstat && plan_xstat(ctx, d, t, p, sg)) {
      g_last_matvec_kernel = matvec_kernel_name(MatvecKernel::Xstat);
      ctx.dispatch(d);
      return;
    }
    const bool x2 = want == MatvecKernel::I8x2;
    // The i8 kernels need dot4I8Packed (a WGSL language feature every Dawn we know of has;
    // without it they quietly run `stream`, as for the formats without an i8 part).
    // WGT_WEBGPU_DISABLE_PACKED_DOT=1 emulates such an implementation (tests).
    const bool packed_dot = ctx.features().packed_dot && !*settings().webgpu_disable_packed_dot;
    const bool i8 = (want == MatvecKernel::I8 || x2) && kernels_for(t).i8 != nullptr && packed_dot;
    uint32_t rows = knob(settings().qmatvec_rows, i8 ? default_i8_rows(t, x2) : default_stream_rows(t));
    const uint32_t warps =
        stream_warps(ctx, i8 ? std::min(kI8Warps, ctx.limits().max_compute_invocations_per_workgroup / kStreamLanes) : kStreamWarps);
    uint32_t ksplit = 1;
    const uint32_t wave = qmatvec_wave(ctx);  // validated even when unused, like the other knobs
    if (i8) i8_split(warps, p.m, p.n, x2, wave, &rows, &ksplit);
    g_last_matvec_split = {rows, ksplit};
    StagedPlan staged;
    if (want == MatvecKernel::Staged) staged = plan_staged(ctx, t, p.row_bytes, rows, warps, stream_unroll(kStagedUnroll));
    const uint32_t i8_kc = i8 ? i8_chunk(ctx, rows, warps, fuse_norm, x2) : 0;
    // The direct kernel's UNROLL (validated on every call that runs it, like the other knobs).
    const uint32_t direct_unroll = !i8_kc && !staged.ok ? stream_unroll(kStreamUnroll) : 0;
    // g (the norm weight) or up as vec4: contiguous from a multiple of 4 elements. Declared
    // here, not in the branch: a compacted copy must outlive the dispatch that binds it.
    Tensor gd;
    if (fuse_norm || fuse_silu) {
      gd = c.inputs.back();
      if (!gd.is_contiguous() || gd.offset() % 4 != 0) gd = ctx.compact(gd);
      d.args.push_back(ctx.arg(gd));
      p.g_off4 = static_cast<uint32_t>(gd.offset() / 4);
      const float eps = static_cast<float>(c.attrs.eps);
      std::memcpy(&p.eps_bits, &eps, sizeof eps);
      g_last_matvec_norm = fuse_norm;
      g_last_matvec_silu = fuse_silu;
    }
    if (fuse_add) {  // bound after g
      d.args.push_back(ctx.arg(c.inputs[2]));
      p.c_off = static_cast<uint32_t>(c.inputs[2].offset());
    }
    g_last_matvec_add = fuse_add;
    // The variant's id: every parameter that selects a define below, one byte each (all are
    // < 256: ROWS, WARPS, KSPLIT <= 8, UNROLL <= 64, NBUF <= 2; source 0 i8, 1 staged, 2 direct), KC in b.
    const uint32_t source = i8_kc ? 0 : staged.ok ? 1 : 2;
    const uint32_t unroll = i8_kc ? 1 : staged.ok ? staged.unroll : direct_unroll;
    static const char family = 0;
    const VariantId id{&family,
                       static_cast<uint64_t>(t) | uint64_t{sg} << 8 | uint64_t{fuse_norm} << 9 | uint64_t{x2} << 10 |
                           uint64_t{fuse_add} << 11 | uint64_t{fuse_silu} << 12 | uint64_t{source} << 16 | uint64_t{rows} << 24 | uint64_t{warps} << 32 |
                           uint64_t{staged.nbuf} << 40 | uint64_t{unroll} << 48 | uint64_t{ksplit} << 56,
                       i8_kc};
    d.pipeline = ctx.pipeline(id, [&] {
      ShaderVariant v{sg ? "q_mv_stream_sg" : "q_mv_stream",
                      {{"QCONST", quant::wgsl_block_constants(t)},
                       {"LANE", i8_kc ? kernels_for(t).i8 : kernels_for(t).lane},
                       {"ROWS", std::to_string(rows)},
                       {"WARPS", std::to_string(warps)},
                       {"KSPLIT", std::to_string(ksplit)},
                       {"NORM", fuse_norm ? "true" : "false"},
                       {"SILU", fuse_silu ? "true" : "false"},
                       {"ADD", fuse_add ? "true" : "false"},
                       {"P_BIND", std::to_string(3 + int{fuse_norm || fuse_silu} + int{fuse_add})},
                       {"C_DECL", fuse_add ? "@group(0) @binding(" + std::to_string(3 + int{fuse_norm || fuse_silu}) +
                                                 ") var<storage, read> cadd: array<f32>;\n"
                                                 "fn addend(i: u32) -> f32 { return cadd[params.c_off + i]; }"
                                           : "fn addend(i: u32) -> f32 { return 0.0; }"},
                       {"G_DECL", fuse_norm || fuse_silu ? "@group(0) @binding(3) var<storage, read> g: array<vec4<f32>>;\n"
                                                           "fn gload(j: u32) -> vec4<f32> { return g[j]; }"
                                                         : "fn gload(j: u32) -> vec4<f32> { return vec4<f32>(1.0); }"}}};
      if (i8_kc) {
        v.defines.push_back({"SOURCE", "q_mv_stream_i8"});
        v.defines.push_back({"KC", std::to_string(i8_kc)});
        v.defines.push_back({"X2", x2 ? "true" : "false"});
        v.defines.push_back({"UNROLL", "1"});
      } else if (staged.ok) {
        v.defines.push_back({"SOURCE", "q_mv_stream_staged"});
        v.defines.push_back({"UNROLL", std::to_string(staged.unroll)});
        v.defines.push_back({"NBUF", std::to_string(staged.nbuf)});
      } else {
        v.defines.push_back({"SOURCE", "q_mv_stream_direct"});
        v.defines.push_back({"UNROLL", std::to_string(direct_unroll)});
      }
      return v;
    });
    g_last_matvec_kernel =
        matvec_kernel_name(i8_kc ? want : staged.ok ? MatvecKernel::Staged : MatvecKernel::Stream);
    // one workgroup per (x row, group of warps * rows weight rows)
    const uint64_t group_rows = uint64_t{warps} / ksplit * rows;
    auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + group_rows - 1) / group_rows));
    d.groups_x = gx;
    d.groups_y = gy;
    ctx.dispatch(d);
    return;
  }
  g_last_matvec_kernel = matvec_kernel_name(MatvecKernel::Items);
  // Subgroup reduction where the device has the feature; the workgroup tree elsewhere.
  const bool sg = use_subgroups(ctx);
  static const char family = 0;
  d.pipeline = ctx.pipeline(VariantId{&family, static_cast<uint64_t>(t) | uint64_t{sg} << 8, 0}, [&] {
    return ShaderVariant{sg ? "q_matvec_sg" : "q_matvec",
                         {{"QCONST", quant::wgsl_block_constants(t)},
                          {"DOT", kernels_for(t).dot},
                          {"ROWS", std::to_string(kRowsPerGroup)}}};
  });
  // one workgroup per (x row, group of kRowsPerGroup weight rows)
  auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + kRowsPerGroup - 1) / kRowsPerGroup));
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

}  // namespace

void launch_qget_rows(Context& ctx, OpCall& c) {
  const QType t = static_cast<QType>(c.attrs.qtype);
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor ids = ctx.compact(c.inputs[1]);
  const Tensor& y = c.outputs[0];
  QGetRowsParams p{};
  p.n_ids = static_cast<uint32_t>(ids.numel());
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  p.nan_bits = 0x7fc00000u;
  const uint64_t threads = uint64_t{p.n_ids} * (p.cols / 8);  // one invocation per 8 elements
  if (threads == 0) return;
  Dispatch d;
  static const char family = 0;
  d.pipeline = ctx.pipeline(VariantId{&family, static_cast<uint64_t>(t), 0}, [&] {
    return ShaderVariant{"q_get_rows", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", kernels_for(t).decode}}};
  });
  const Context::StatusFlag st = ctx.status_flag(c.name.c_str());
  p.flag = st.bit;
  d.args = {ctx.arg(w, true), ctx.arg(ids, true), ctx.arg(y, false), st.arg};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// Test hook: "staged", "stream", "xstat" or "items", the kernel of this thread's last M <= 4
// qmatmul_t launch ("" before any); the staged kernel falls back silently where rows are not
// 16-byte aligned, the xstat kernel where K has too many steps. Not declared in a header: the tests declare it.
const char* last_qmatvec_kernel_for_testing() { return g_last_matvec_kernel; }
bool last_qmatvec_fused_norm_for_testing() { return g_last_matvec_norm; }
std::pair<uint32_t, uint32_t> last_qmatvec_split_for_testing() { return g_last_matvec_split; }
bool last_qmatvec_fused_add_for_testing() { return g_last_matvec_add; }
bool last_qmatvec_fused_silu_for_testing() { return g_last_matvec_silu; }

void register_quant_kernels(KernelRegistry& r) {
  r.add(OpKind::QGetRows, check_qdequantize, launch_qget_rows);
  r.add(OpKind::QMatMul, check_qmatmul, launch_qmatmul);
  r.add(OpKind::QDequantize, check_qdequantize, launch_qdequantize);
}

}  // namespace wgt::webgpu
