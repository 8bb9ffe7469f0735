// Launchers of the quantized kernels on WebGPU, every GGUF format (Q8_0, Q4_0, Q4_1, Q4_K,
// Q5_K, Q6_K): y = x W^T (OpKind::QMatMul; for small M q_mv_stream[_sg] over the format's
// q*_lane (default), or q_matvec[_sg] over its q*_dot; q_matmul_tiled over its q*_decode for prefill), dequantize (OpKind::QDequantize;
// q_dequant) and the embedding lookup (OpKind::QGetRows; q_get_rows). Weights stay packed in
// their device buffers; the block constants are injected from src/quant/blocks.hpp (QCONST
// define), never retyped, and the format's shader parts are picked by the DOT/DECODE defines.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "quant/blocks.hpp"
#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

// Weight rows per matvec workgroup: x is loaded once per work item and reused for these
// rows. 4 is a first guess (not tuned on a real GPU yet).
constexpr uint32_t kRowsPerGroup = 4;
// Above this many x rows the tiled kernel (W decoded once per 16*T rows of x) replaces the
// matvec one (W streamed once per x row).
constexpr int64_t kMatvecMaxM = 4;

// Mirrors `struct Params` of shaders/q_matvec_common.wgsl.
struct QParams {
  uint32_t m, n, k, row_bytes;
};
static_assert(sizeof(QParams) == 16, "QParams must match the WGSL Params layout");

// Shader parts of each format: the matvec work item (q*_dot), the 8-element decoder
// (q*_decode) shared by dequantize, get_rows and the tiled prefill matmul, and the lane part
// of the streaming matvec (q*_lane; nullptr where the format has none yet).
struct QKernels {
  const char* dot;
  const char* decode;
  const char* lane;
};
QKernels kernels_for(QType t) {
  switch (t) {
    case QType::Q8_0: return {"q8_0_dot", "q8_0_decode", "q8_0_lane"};
    case QType::Q4_0: return {"q4_0_dot", "q4_0_decode", "q4_0_lane"};
    case QType::Q4_1: return {"q4_1_dot", "q4_1_decode", "q4_1_lane"};
    case QType::Q4_K: return {"q4_k_dot", "q4_k_decode", "q4_k_lane"};
    case QType::Q5_K: return {"q5_k_dot", "q5_k_decode", "q5_k_lane"};
    case QType::Q6_K: return {"q6_k_dot", "q6_k_decode", "q6_k_lane"};
  }
  return {nullptr, nullptr, nullptr};
}

// Mirrors `struct Params` of shaders/q_dequant.wgsl.
struct QDeqParams {
  uint32_t rows, cols, row_bytes, pad;
};
static_assert(sizeof(QDeqParams) == 16, "QDeqParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_get_rows.wgsl.
struct QGetRowsParams {
  uint32_t n_ids, cols, row_bytes, rows, nan_bits, pad0, pad1, pad2;
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
  d.pipeline = ctx.pipeline({"q_dequant", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", kernels_for(t).decode}}});
  d.args = {ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

Support check_qmatmul(const Context& ctx, const OpCall& c) {
  if (c.inputs.size() != 2) return Support::no("qmatmul expects 2 inputs and 1 output");
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
bool use_subgroups(const Context& ctx) {
  const char* v = std::getenv("WGT_QMATVEC_SUBGROUPS");
  if (!v || !*v || std::string(v) == "on") return ctx.features().subgroups;
  if (std::string(v) == "off") return false;
  throw_error(ErrorKind::InvalidArgument, "qmatmul_t", std::string("WGT_QMATVEC_SUBGROUPS='") + v + "'; use on or off");
}

constexpr uint32_t kStreamLanes = 32;  // LANES of shaders/q_mv_stream_common.wgsl

// WGT_QMATVEC_KERNEL picks the M <= 4 kernel: `stream` (default; warps of 32 lanes streaming
// ROWS weight rows each, every format has a q*_lane shader) or `items` (q_matvec[_sg], one
// block per invocation), so that the two can be compared on the same build.
bool use_stream(QType t) {
  const char* v = std::getenv("WGT_QMATVEC_KERNEL");
  const bool stream = !v || !*v || std::string(v) == "stream";
  if (!stream && std::string(v) != "items")
    throw_error(ErrorKind::InvalidArgument, "qmatmul_t", std::string("WGT_QMATVEC_KERNEL='") + v + "'; use stream or items");
  return stream && kernels_for(t).lane != nullptr;
}

// Integer knob `var` in [lo, hi] (digits only), `dflt` when unset or empty.
uint32_t env_knob(const char* var, uint32_t dflt, uint32_t lo, uint32_t hi) {
  const char* v = std::getenv(var);
  if (!v || !*v) return dflt;
  const int r = std::atoi(v);
  if (r < static_cast<int>(lo) || r > static_cast<int>(hi) || std::to_string(r) != v)
    throw_error(ErrorKind::InvalidArgument, "qmatmul_t",
                std::string(var) + "='" + v + "'; use " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<uint32_t>(r);
}

// Weight rows per warp of the streaming matvec: each lane loads its x slice once per step
// and dots it with this many rows (x traffic from L1 divided by it, R accumulators and R
// sets of weight loads per lane). 4 is a guess pending the H200 sweep; WGT_QMATVEC_ROWS=1..8.
constexpr uint32_t kStreamRows = 4;
// Warps (of 32 invocations) per workgroup; a workgroup covers WARPS * ROWS rows.
// WGT_QMATVEC_WARPS=1..8 (at most the device's invocations per workgroup / 32).
constexpr uint32_t kStreamWarps = 4;
// Blocks per lane per trip of the main loop (UNROLL * ROWS weight loads in flight per
// lane). WGT_QMATVEC_UNROLL=1, 2, 4 or 8.
constexpr uint32_t kStreamUnroll = 2;

uint32_t stream_unroll() {
  const uint32_t u = env_knob("WGT_QMATVEC_UNROLL", kStreamUnroll, 1, 8);
  if ((u & (u - 1)) != 0) throw_error(ErrorKind::InvalidArgument, "qmatmul_t", "WGT_QMATVEC_UNROLL=" + std::to_string(u) + "; use 1, 2, 4 or 8");
  return u;
}

uint32_t stream_warps(const Context& ctx) {
  const uint32_t wp = env_knob("WGT_QMATVEC_WARPS", kStreamWarps, 1, 8);
  if (wp * kStreamLanes > ctx.limits().max_compute_invocations_per_workgroup)
    throw_error(ErrorKind::Unsupported, "qmatmul_t",
                "WGT_QMATVEC_WARPS=" + std::to_string(wp) + " exceeds the device's invocations per workgroup; use fewer");
  return wp;
}

void launch_qmatmul(Context& ctx, OpCall& c) {
  const QType t = static_cast<QType>(c.attrs.qtype);
  const Tensor x = ctx.compact(c.inputs[0]);
  const Tensor& w = c.inputs[1];
  const Tensor& y = c.outputs[0];
  QParams p{};
  p.m = static_cast<uint32_t>(x.size(0));
  p.k = static_cast<uint32_t>(x.size(1));
  p.n = static_cast<uint32_t>(y.size(1));
  p.row_bytes = static_cast<uint32_t>(qtype_row_bytes(t, p.k, "qmatmul_t"));
  if (uint64_t{p.m} * p.n == 0) return;
  const std::string qconst = quant::wgsl_block_constants(t);
  Dispatch d;
  d.args = {ctx.arg(x, true), ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  if (p.m > kMatvecMaxM) {
    const uint32_t tt = tiled_t(ctx);
    d.pipeline = ctx.pipeline({"q_matmul_tiled", {{"QCONST", qconst}, {"DECODE", kernels_for(t).decode}, {"T", std::to_string(tt)}}});
    d.groups_x = (p.n + 16 * tt - 1) / (16 * tt);
    d.groups_y = (p.m + 16 * tt - 1) / (16 * tt);
    ctx.dispatch(d);
    return;
  }
  if (use_stream(t)) {
    // The subgroup variant needs every subgroup inside one 32-lane row group.
    const uint32_t sg_max = ctx.limits().subgroup_max_size;
    const bool sg = use_subgroups(ctx) && sg_max > 0 && sg_max <= kStreamLanes;
    const uint32_t rows = env_knob("WGT_QMATVEC_ROWS", kStreamRows, 1, 8);
    const uint32_t warps = stream_warps(ctx);
    d.pipeline = ctx.pipeline({sg ? "q_mv_stream_sg" : "q_mv_stream",
                               {{"QCONST", qconst},
                                {"LANE", kernels_for(t).lane},
                                {"ROWS", std::to_string(rows)},
                                {"WARPS", std::to_string(warps)},
                                {"UNROLL", std::to_string(stream_unroll())}}});
    // one workgroup per (x row, group of warps * rows weight rows)
    const uint64_t group_rows = uint64_t{warps} * rows;
    auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + group_rows - 1) / group_rows));
    d.groups_x = gx;
    d.groups_y = gy;
    ctx.dispatch(d);
    return;
  }
  // Subgroup reduction where the device has the feature; the workgroup tree elsewhere.
  const char* shader = use_subgroups(ctx) ? "q_matvec_sg" : "q_matvec";
  d.pipeline = ctx.pipeline(
      {shader, {{"QCONST", qconst}, {"DOT", kernels_for(t).dot}, {"ROWS", std::to_string(kRowsPerGroup)}}});
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
  d.pipeline = ctx.pipeline({"q_get_rows", {{"QCONST", quant::wgsl_block_constants(t)}, {"DECODE", kernels_for(t).decode}}});
  d.args = {ctx.arg(w, true), ctx.arg(ids, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((threads + 63) / 64);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

void register_quant_kernels(KernelRegistry& r) {
  r.add(OpKind::QGetRows, check_qdequantize, launch_qget_rows);
  r.add(OpKind::QMatMul, check_qmatmul, launch_qmatmul);
  r.add(OpKind::QDequantize, check_qdequantize, launch_qdequantize);
}

}  // namespace wgt::webgpu
