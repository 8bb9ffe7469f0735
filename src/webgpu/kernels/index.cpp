// WebGPU launchers of the indexing family: Concat (N strided inputs, any axis, one dispatch
// per input), IndexSelect and Gather (one shared gather kernel; i32 or i64 indices). Any
// element size of 1, 2, 4 or 8 bytes is moved as raw bits, so every dtype works.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "webgpu/context.hpp"

namespace wgt::webgpu {
namespace {

constexpr uint32_t kWG = 256;

// Mirrors IndexParams of shaders/index_common.wgsl.
struct IndexParams {
  uint32_t shape[8], sa[8], sb[8];
  uint32_t rank, numel, x_off, y_off;
  uint32_t b_off, ax_stride, ax_size, flag;
};
static_assert(sizeof(IndexParams) == 128, "IndexParams must match the WGSL struct");

struct Dim {
  int64_t size, sa, sb;
};

// Drops size-1 dims and merges neighbours contiguous for both stride sets (row-major order).
std::vector<Dim> coalesce(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().sa == d.sa * d.size && out.back().sb == d.sb * d.size)
      out.back() = {out.back().size * d.size, d.sa, d.sb};
    else
      out.push_back(d);
  }
  return out;
}

// Offsets wrap modulo 2^32 in the shader, so negative strides travel as two's complement.
uint32_t u32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

IndexParams make_params(const std::vector<Dim>& dims) {
  IndexParams p{};
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    p.shape[i] = u32(dims[i].size);
    p.sa[i] = u32(dims[i].sa);
    p.sb[i] = u32(dims[i].sb);
    n *= dims[i].size;
  }
  for (size_t i = dims.size(); i < 8; ++i) p.shape[i] = 1;
  p.rank = static_cast<uint32_t>(dims.size());
  p.numel = u32(n);
  return p;
}

Support check_bytes(const Context& ctx, uint64_t bytes) {
  if (bytes > ctx.limits().max_storage_buffer_binding_size)
    return Support::no("buffer of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferBindingSize " +
                       std::to_string(ctx.limits().max_storage_buffer_binding_size));
  // Element indices are u32 and 1-byte elements are addressed as byte offsets.
  if (bytes >= (uint64_t{1} << 32)) return Support::no("buffer of 4 GiB or more");
  return Support::yes();
}

// supports() runs before the output is allocated: it is judged by `out_bytes`.
Support check_buffers(const Context& ctx, const OpCall& call, uint64_t out_bytes) {
  if (call.inputs.empty() || call.outputs.size() > 1) return Support::no("expects inputs and one output");
  for (const auto* list : {&call.inputs, &call.outputs}) {
    for (const Tensor& t : *list) {
      if (!t.defined()) return Support::no("undefined operand");
      if (t.dim() > 8) return Support::no("rank " + std::to_string(t.dim()) + " > 8");
      if (Support s = check_bytes(ctx, t.storage()->nbytes()); !s.ok) return s;
    }
  }
  if (Support s = check_bytes(ctx, out_bytes); !s.ok) return s;
  const DType dt = call.inputs[0].dtype();
  if (dtype_size(dt) != 1 && dtype_size(dt) != 2 && dtype_size(dt) != 4 && dtype_size(dt) != 8)
    return Support::no(std::string("element size of ") + dtype_name(dt) + " not supported");
  return Support::yes();
}

void run(Context& ctx, const ShaderVariant& v, std::vector<Arg> args, const IndexParams& p) {
  if (p.numel == 0) return;
  auto [gx, gy] = ctx.grid((uint64_t{p.numel} + kWG - 1) / kWG);
  Dispatch d;
  d.pipeline = ctx.pipeline(v);
  d.args = std::move(args);
  d.params = &p;
  d.params_size = sizeof p;
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
}

// ---------------- Concat ----------------

Support check_concat(const Context& ctx, const OpCall& call) {
  uint64_t out_bytes = 0;
  for (const Tensor& t : call.inputs) out_bytes += t.defined() ? t.nbytes() : 0;
  if (Support s = check_buffers(ctx, call, out_bytes); !s.ok) return s;
  for (const Tensor& t : call.inputs)
    if (t.dtype() != call.inputs[0].dtype()) return Support::no("inputs differ in dtype");
  return Support::yes();
}

void launch_concat(Context& ctx, OpCall& call) {
  const Tensor& y = call.outputs[0];
  const int ax = static_cast<int>(call.attrs.axis);
  const Strides ys = y.strides();
  const std::string eb = std::to_string(dtype_size(y.dtype()));
  int64_t start = 0;
  for (const Tensor& x : call.inputs) {
    std::vector<Dim> dims;
    for (int d = 0; d < x.dim(); ++d) dims.push_back({x.size(d), x.strides()[d], ys[d]});
    IndexParams p = make_params(coalesce(dims));
    p.x_off = u32(x.offset());
    p.y_off = u32(y.offset() + start * ys[ax]);
    start += x.size(ax);
    // Inputs of the same buffer as the output cannot occur (outputs are fresh allocations).
    run(ctx, {"concat", {{"EB", eb}}}, {ctx.arg(x), ctx.arg(y, false)}, p);
  }
}

// ---------------- IndexSelect / Gather ----------------

// Iteration dims of the gather kernel over the output (row-major), with x strides (sa) and
// index strides (sb); `ax_stride` is x's stride along the axis.
std::vector<Dim> gather_dims(const OpCall& call) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  const int ax = static_cast<int>(call.attrs.axis);
  std::vector<Dim> dims;
  if (call.kind == OpKind::Gather) {
    for (int d = 0; d < idx.dim(); ++d) dims.push_back({idx.size(d), d == ax ? 0 : x.strides()[d], idx.strides()[d]});
  } else {
    for (int d = 0; d < ax; ++d) dims.push_back({x.size(d), x.strides()[d], 0});
    for (int d = 0; d < idx.dim(); ++d) dims.push_back({idx.size(d), 0, idx.strides()[d]});
    for (int d = ax + 1; d < x.dim(); ++d) dims.push_back({x.size(d), x.strides()[d], 0});
  }
  return coalesce(dims);
}

Support check_gather(const Context& ctx, const OpCall& call) {
  if (call.inputs.size() != 2) return Support::no("expects {x, indices}");
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  if (!x.defined() || !idx.defined()) return Support::no("undefined operand");
  if (x.dim() == 0) return Support::no("0-d x has no axis");
  const uint64_t out_n = call.kind == OpKind::Gather
                             ? static_cast<uint64_t>(idx.numel())
                             : static_cast<uint64_t>(idx.numel()) * static_cast<uint64_t>(x.numel() / std::max<int64_t>(1, x.size(call.attrs.axis)));
  if (Support s = check_buffers(ctx, call, out_n * dtype_size(x.dtype())); !s.ok) return s;
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64) return Support::no("indices must be i32 or i64");
  if (!call.outputs.empty() && x.dtype() != call.outputs[0].dtype()) return Support::no("output dtype differs from x");
  if (gather_dims(call).size() > 8) return Support::no("more than 8 iteration dims after coalescing");
  // Every index is out of range then; the CPU path reports it as OutOfRange.
  if (x.size(call.attrs.axis) == 0 && idx.numel() > 0) return Support::no("x is empty along the axis");
  return Support::yes();
}

void launch_gather(Context& ctx, OpCall& call) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  const Tensor& y = call.outputs[0];
  const int ax = static_cast<int>(call.attrs.axis);
  IndexParams p = make_params(gather_dims(call));
  p.x_off = u32(x.offset());
  p.y_off = u32(y.offset());
  p.b_off = u32(idx.offset());
  p.ax_stride = u32(x.strides()[ax]);
  p.ax_size = u32(x.size(ax));
  if (p.numel == 0) return;  // no index is read: nothing to flag (and no check armed)
  const Context::StatusFlag st = ctx.status_flag(call.name.c_str());
  p.flag = st.bit;
  ShaderVariant v{"gather",
                  {{"EB", std::to_string(dtype_size(x.dtype()))}, {"IW", idx.dtype() == DType::I64 ? "2" : "1"}}};
  run(ctx, v, {ctx.arg(x), ctx.arg(idx), ctx.arg(y, false), st.arg}, p);
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add(OpKind::Concat, check_concat, launch_concat);
  r.add(OpKind::IndexSelect, check_gather, launch_gather);
  r.add(OpKind::Gather, check_gather, launch_gather);
}

}  // namespace wgt::webgpu
