// Launchers of the quantized kernels on WebGPU: y = x W^T (OpKind::QMatMul; shaders
// q*_matvec over q_matvec_common), dequantize (OpKind::QDequantize; q*_dequant) and the
// embedding lookup (OpKind::QGetRows; q*_get_rows), the last two sharing q*_items. Weights stay packed in their device buffers; the block constants are
// injected from src/quant/blocks.hpp (QCONST define), never retyped.
#include <algorithm>
#include <string>

#include "quant/blocks.hpp"
#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

// Weight rows per matvec workgroup: x is loaded once per work item and reused for these
// rows. 4 is a first guess (not tuned on a real GPU yet).
constexpr uint32_t kRowsPerGroup = 4;

// Mirrors `struct Params` of shaders/q_matvec_common.wgsl.
struct QParams {
  uint32_t m, n, k, row_bytes;
};
static_assert(sizeof(QParams) == 16, "QParams must match the WGSL Params layout");

// Formats with WebGPU kernels. items_per_block mirrors ITEMS_PER_BLOCK of the shaders.
struct QKernels {
  const char* matvec;
  const char* dequant;
  const char* get_rows;
  uint32_t items_per_block;
};
const QKernels* kernels_for(QType t) {
  static constexpr QKernels q8_0{"q8_0_matvec", "q8_0_dequant", "q8_0_get_rows", 1};
  static constexpr QKernels q4_k{"q4_k_matvec", "q4_k_dequant", "q4_k_get_rows", 4};
  switch (t) {
    case QType::Q8_0: return &q8_0;
    case QType::Q4_K: return &q4_k;
    default: return nullptr;
  }
}
const char* shader_for(QType t) { return kernels_for(t) ? kernels_for(t)->matvec : nullptr; }

// Mirrors `struct Params` of shaders/q_dequant_common.wgsl.
struct QDeqParams {
  uint32_t rows, cols, row_bytes, items_per_row;
};
static_assert(sizeof(QDeqParams) == 16, "QDeqParams must match the WGSL Params layout");

// Mirrors `struct Params` of shaders/q_get_rows_common.wgsl.
struct QGetRowsParams {
  uint32_t n_ids, cols, row_bytes, items_per_row, rows, nan_bits, pad1, pad2;
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
  if (!kernels_for(t)) return Support::no(std::string("no WebGPU kernel for ") + qtype_name(t) + " yet (q8_0, q4_k)");
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
  const QKernels& k = *kernels_for(t);
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor& y = c.outputs[0];
  QDeqParams p{};
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  p.items_per_row = p.row_bytes / info.block_bytes * k.items_per_block;
  const uint64_t threads = uint64_t{p.rows} * p.items_per_row;
  if (threads == 0) return;
  Dispatch d;
  d.pipeline = ctx.pipeline({k.dequant, {{"QCONST", quant::wgsl_block_constants(t)}}});
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
  if (!shader_for(t)) return Support::no(std::string("no WebGPU kernel for ") + qtype_name(t) + " yet (q8_0, q4_k)");
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
  // Byte offsets are u32 in the shader.
  if (wbytes >= (uint64_t{1} << 32) || static_cast<uint64_t>(x.numel()) >= (uint64_t{1} << 32))
    return Support::no("operands above 4 GiB / 2^32 elements");
  return Support::yes();
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
  Dispatch d;
  d.pipeline = ctx.pipeline(
      {shader_for(t), {{"QCONST", quant::wgsl_block_constants(t)}, {"ROWS", std::to_string(kRowsPerGroup)}}});
  d.args = {ctx.arg(x, true), ctx.arg(w, true), ctx.arg(y, false)};
  d.params = &p;
  d.params_size = sizeof p;
  // one workgroup per (x row, group of kRowsPerGroup weight rows)
  auto [gx, gy] = ctx.grid(uint64_t{p.m} * ((uint64_t{p.n} + kRowsPerGroup - 1) / kRowsPerGroup));
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

}  // namespace

void launch_qget_rows(Context& ctx, OpCall& c) {
  const QType t = static_cast<QType>(c.attrs.qtype);
  const QKernels& k = *kernels_for(t);
  const QTypeInfo& info = qtype_info(t);
  const Tensor& w = c.inputs[0];
  const Tensor ids = ctx.compact(c.inputs[1]);
  const Tensor& y = c.outputs[0];
  QGetRowsParams p{};
  p.n_ids = static_cast<uint32_t>(ids.numel());
  p.rows = static_cast<uint32_t>(w.size(0));
  p.row_bytes = static_cast<uint32_t>(w.size(1));
  p.cols = p.row_bytes / info.block_bytes * info.block_elems;
  p.items_per_row = p.row_bytes / info.block_bytes * k.items_per_block;
  p.nan_bits = 0x7fc00000u;
  const uint64_t threads = uint64_t{p.n_ids} * p.items_per_row;
  if (threads == 0) return;
  Dispatch d;
  d.pipeline = ctx.pipeline({k.get_rows, {{"QCONST", quant::wgsl_block_constants(t)}}});
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
