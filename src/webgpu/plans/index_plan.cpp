// plan_index: the capability rules of the concat and gather kernels.
#include "webgpu/plans/index_plan.hpp"

#include <algorithm>
#include <string>

namespace wgt::webgpu {
namespace {

using P = Planned<IndexPlan>;

Support check_bytes(const Caps& caps, uint64_t bytes) {
  if (bytes > caps.limits.max_storage_buffer_binding_size)
    return Support::no("buffer of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferBindingSize " +
                       std::to_string(caps.limits.max_storage_buffer_binding_size));
  // Element indices are u32 and 1-byte elements are addressed as byte offsets.
  if (bytes >= (uint64_t{1} << 32)) return Support::no("buffer of 4 GiB or more");
  return Support::yes();
}

// supports() runs before the output is allocated: it is judged by `out_bytes`.
Support check_buffers(const Caps& caps, const OpCall& call, uint64_t out_bytes) {
  if (call.inputs.empty() || call.outputs.size() > 1) return Support::no("expects inputs and one output");
  for (const auto* list : {&call.inputs, &call.outputs}) {
    for (const Tensor& t : *list) {
      if (!t.defined()) return Support::no("undefined operand");
      if (t.dim() > 8) return Support::no("rank " + std::to_string(t.dim()) + " > 8");
      if (Support s = check_bytes(caps, t.storage()->nbytes()); !s.ok) return s;
    }
  }
  if (Support s = check_bytes(caps, out_bytes); !s.ok) return s;
  const DType dt = call.inputs[0].dtype();
  if (dtype_size(dt) != 1 && dtype_size(dt) != 2 && dtype_size(dt) != 4 && dtype_size(dt) != 8)
    return Support::no(std::string("element size of ") + dtype_name(dt) + " not supported");
  return Support::yes();
}

P plan_concat(const Caps& caps, const OpCall& call) {
  uint64_t out_bytes = 0;
  for (const Tensor& t : call.inputs) out_bytes += t.defined() ? t.nbytes() : 0;
  if (Support s = check_buffers(caps, call, out_bytes); !s.ok) return P::no(s.reason);
  for (const Tensor& t : call.inputs)
    if (t.dtype() != call.inputs[0].dtype()) return P::no("inputs differ in dtype");
  P p;
  p.plan.shader.kernel = IndexKernel::Concat;
  p.plan.shader.elem_bytes = static_cast<uint8_t>(dtype_size(call.inputs[0].dtype()));
  return p;
}

P plan_gather(const Caps& caps, const OpCall& call) {
  if (call.inputs.size() != 2) return P::no("expects {x, indices}");
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  if (!x.defined() || !idx.defined()) return P::no("undefined operand");
  if (x.dim() == 0) return P::no("0-d x has no axis");
  const uint64_t out_n =
      call.kind == OpKind::Gather
          ? static_cast<uint64_t>(idx.numel())
          : static_cast<uint64_t>(idx.numel()) *
                static_cast<uint64_t>(x.numel() / std::max<int64_t>(1, x.size(call.attrs.axis)));
  if (Support s = check_buffers(caps, call, out_n * dtype_size(x.dtype())); !s.ok) return P::no(s.reason);
  if (idx.dtype() != DType::I32 && idx.dtype() != DType::I64) return P::no("indices must be i32 or i64");
  if (!call.outputs.empty() && x.dtype() != call.outputs[0].dtype()) return P::no("output dtype differs from x");
  if (gather_dims(call).size() > 8) return P::no("more than 8 iteration dims after coalescing");
  // Every index is out of range then; the CPU path reports it as OutOfRange.
  if (x.size(call.attrs.axis) == 0 && idx.numel() > 0) return P::no("x is empty along the axis");
  P p;
  p.plan.shader.kernel = IndexKernel::Gather;
  p.plan.shader.elem_bytes = static_cast<uint8_t>(dtype_size(x.dtype()));
  p.plan.shader.index_words = idx.dtype() == DType::I64 ? 2 : 1;
  return p;
}

}  // namespace

std::vector<IndexDim> index_coalesce(const std::vector<IndexDim>& dims) {
  std::vector<IndexDim> out;
  for (const IndexDim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().sa == d.sa * d.size && out.back().sb == d.sb * d.size)
      out.back() = {out.back().size * d.size, d.sa, d.sb};
    else
      out.push_back(d);
  }
  return out;
}

std::vector<IndexDim> gather_dims(const OpCall& call) {
  const Tensor &x = call.inputs[0], &idx = call.inputs[1];
  const int ax = static_cast<int>(call.attrs.axis);
  std::vector<IndexDim> dims;
  if (call.kind == OpKind::Gather) {
    for (int d = 0; d < idx.dim(); ++d) dims.push_back({idx.size(d), d == ax ? 0 : x.strides()[d], idx.strides()[d]});
  } else {
    for (int d = 0; d < ax; ++d) dims.push_back({x.size(d), x.strides()[d], 0});
    for (int d = 0; d < idx.dim(); ++d) dims.push_back({idx.size(d), 0, idx.strides()[d]});
    for (int d = ax + 1; d < x.dim(); ++d) dims.push_back({x.size(d), x.strides()[d], 0});
  }
  return index_coalesce(dims);
}

Planned<IndexPlan> plan_index(const Caps& caps, const OpCall& call) {
  switch (call.kind) {
    case OpKind::Concat: return plan_concat(caps, call);
    case OpKind::IndexSelect:
    case OpKind::Gather: return plan_gather(caps, call);
    default: return P::no(std::string("no indexing kernel for ") + op_kind_name(call.kind));
  }
}

PipelineKey IndexPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant IndexPlan::variant() const {
  const std::string eb = std::to_string(shader.elem_bytes);
  if (shader.kernel == IndexKernel::Concat) return {"concat", {{"EB", eb}}};
  return {"gather", {{"EB", eb}, {"IW", std::to_string(shader.index_words)}}};
}

}  // namespace wgt::webgpu
