// plan_reduce: the reduce family's capability rules and its choice of row kernel; the row
// geometry (reduce_rows) that both the plan and the launcher use.
#include "webgpu/plans/reduce_plan.hpp"

#include <algorithm>
#include <string>

namespace wgt::webgpu {
namespace {

using P = Planned<ReducePlan>;
constexpr uint32_t kMaxCache = 16;  // vec4 per invocation in the register-cached row kernels

// Drops size-1 dims and merges neighbours that are contiguous with each other for both the
// input and the output, keeping row-major order (outer first).
std::vector<ReduceDim> coalesce(const std::vector<ReduceDim>& dims) {
  std::vector<ReduceDim> out;
  for (const ReduceDim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().s_in == d.s_in * d.size && out.back().s_out == d.s_out * d.size) {
      out.back() = {out.back().size * d.size, d.s_in, d.s_out};
    } else {
      out.push_back(d);
    }
  }
  return out;
}

Support check_bytes(const Caps& caps, uint64_t bytes, size_t elem) {
  if (bytes > caps.limits.max_storage_buffer_binding_size)
    return Support::no("buffer of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferBindingSize " +
                       std::to_string(caps.limits.max_storage_buffer_binding_size));
  if (bytes / elem >= (uint64_t{1} << 32)) return Support::no("more than 2^32 elements in one buffer");
  return Support::yes();
}

// Common capability rules: f32 (f16 with shader-f16, or through f32), rank <= 8, every bound
// buffer within the binding limit and addressable with u32 element indices. supports() runs
// before the outputs are allocated, so the output is judged by `out_bytes` (and checked again
// if present).
Support check_float_tensors(const Caps& caps, const OpCall& call, uint64_t out_bytes) {
  if (call.inputs.empty()) return Support::no("missing input");
  for (const auto* list : {&call.inputs, &call.outputs}) {
    for (const Tensor& t : *list) {
      if (!t.defined()) return Support::no("undefined operand");
      if (t.dim() > 8) return Support::no("rank " + std::to_string(t.dim()) + " > 8");
      if (Support s = check_bytes(caps, t.storage()->nbytes(), dtype_size(t.dtype())); !s.ok) return s;
    }
  }
  if (Support s = check_bytes(caps, out_bytes, 4); !s.ok) return s;
  const DType dt = call.inputs[0].dtype();
  if (dt != DType::F32 && dt != DType::F16)
    return Support::no(std::string("dtype ") + dtype_name(dt) + " not supported (f32, f16)");
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (call.inputs[i].dtype() != dt) return Support::no("weight/bias dtype differs from the input dtype");
  return Support::yes();
}

Support check(const Caps& caps, const OpCall& call) {
  switch (call.kind) {
    case OpKind::Reduce: {
      if (call.inputs.size() != 1 || call.outputs.size() > 1) return Support::no("reduce takes one input and one output");
      if (Support s = check_float_tensors(caps, call, 0); !s.ok) return s;
      const DType want = call.attrs.reduce == ReduceOp::ArgMax ? DType::I64 : call.inputs[0].dtype();
      if (!call.outputs.empty() && call.outputs[0].dtype() != want) return Support::no("unexpected output dtype");
      return Support::yes();
    }
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      if (call.inputs.size() != 1 || call.outputs.size() > 1) return Support::no("softmax takes one input and one output");
      if (Support s = check_float_tensors(caps, call, call.inputs[0].nbytes()); !s.ok) return s;
      if (call.inputs[0].dim() == 0) return Support::no("softmax of a 0-d tensor");
      if (!call.outputs.empty() && call.outputs[0].dtype() != call.inputs[0].dtype())
        return Support::no("output dtype differs from input");
      return Support::yes();
    case OpKind::RMSNorm:
    case OpKind::LayerNorm: {
      const size_t want = 1 + (call.attrs.has_weight ? 1 : 0) + (call.attrs.has_bias ? 1 : 0);
      if (call.kind == OpKind::RMSNorm && call.attrs.has_bias) return Support::no("rms_norm has no bias");
      if (call.inputs.size() != want || call.outputs.size() > 1)
        return Support::no("expected " + std::to_string(want) + " inputs and one output");
      if (Support s = check_float_tensors(caps, call, call.inputs[0].nbytes()); !s.ok) return s;
      const Tensor& x = call.inputs[0];
      if (x.dim() == 0) return Support::no("normalization of a 0-d tensor");
      for (size_t i = 1; i < call.inputs.size(); ++i)
        if (call.inputs[i].dim() != 1 || call.inputs[i].size(0) != x.size(-1))
          return Support::no("weight/bias must have shape [" + std::to_string(x.size(-1)) + "]");
      if (!call.outputs.empty() && call.outputs[0].dtype() != x.dtype()) return Support::no("output dtype differs from input");
      return Support::yes();
    }
    default: return Support::no(std::string("no reduce-family kernel for ") + op_kind_name(call.kind));
  }
}

// vec4 per invocation for a register-cached row of n elements, a power of two, or 0 if the
// row is too long to cache.
uint32_t cache_for(int64_t n) {
  const int64_t per = (n / 4 + kReduceWG - 1) / kReduceWG;
  uint32_t c = 1;
  while (c < per) c *= 2;
  return c <= kMaxCache ? c : 0;
}

bool aligned4(const std::vector<ReduceDim>& outer, const Tensor& x, int64_t y_off) {
  if (x.offset() % 4 || y_off % 4) return false;
  for (const ReduceDim& d : outer)
    if (d.s_in % 4 || d.s_out % 4) return false;
  return true;
}

// Subgroup reductions of the row kernels (reduce_rowred.wgsl): they need the feature and one
// fixed subgroup size (the shader derives a subgroup's index as lid / size) of at least 4
// dividing the workgroup; the tuning can turn them off (tests compare both, benchmarks
// measure both).
bool row_subgroups(const Caps& caps, const ReduceTuning& tuning) {
  const Limits& l = caps.limits;
  return tuning.subgroups && caps.features.subgroups && l.subgroup_min_size == l.subgroup_max_size &&
         l.subgroup_min_size >= 4 && kReduceWG % l.subgroup_min_size == 0;
}

// The call as the f32 kernel sees it when f16 goes through f32: every f16 operand replaced by
// a contiguous f32 tensor of its shape (storage-less: only its layout matters here).
OpCall f32_twin(const OpCall& call) {
  OpCall c = call;
  auto f32 = [](const Tensor& t) {
    return Tensor(Storage::meta(static_cast<size_t>(t.numel()) * 4, t.device()), t.shape(), contiguous_strides(t.shape()),
                  0, DType::F32);
  };
  for (Tensor& t : c.inputs)
    if (t.defined() && t.dtype() == DType::F16) t = f32(t);
  for (Tensor& t : c.outputs)
    if (t.defined() && t.dtype() == DType::F16) t = f32(t);
  for (auto& spec : c.out_specs)
    if (spec.second == DType::F16) spec.second = DType::F32;
  return c;
}

ReducePlan choose(const Caps& caps, const ReduceTuning& tuning, const OpCall& call) {
  ReducePlan plan;
  ReduceShader& s = plan.shader;
  const Tensor& x = call.inputs[0];
  s.f16 = x.dtype() == DType::F16;
  const ReduceRows r = reduce_rows(call);
  const int64_t y_off = call.outputs.empty() ? 0 : call.outputs[0].offset();
  const bool sg = row_subgroups(caps, tuning);
  if (call.kind == OpKind::Reduce) {
    s.op = static_cast<uint8_t>(call.attrs.reduce);
    // A workgroup per output when the row is long, or contiguous enough for coalesced reads;
    // otherwise an invocation per output so that neighbours read neighbouring addresses.
    const bool inner_contig = r.inner.empty() || r.inner.back().s_in == 1;
    const bool rows = r.n_red >= 4096 || (inner_contig ? r.n_red >= 32 : r.n_out < 2048);
    // Sum / mean of one contiguous reduced dim of 4k elements, rows 16-byte aligned: the vec4
    // kernel (a workgroup per output too).
    const ReduceOp op = call.attrs.reduce;
    const bool v4 = rows && r.inner.size() == 1 && inner_contig && r.n_red % 4 == 0 &&
                    (op == ReduceOp::Sum || op == ReduceOp::Mean) && x.offset() % 4 == 0 &&
                    std::all_of(r.outer.begin(), r.outer.end(), [](const ReduceDim& d) { return d.s_in % 4 == 0; });
    s.kernel = v4 ? ReduceKernel::RowV4 : rows ? ReduceKernel::Rows : ReduceKernel::Cols;
    s.sg = v4 && sg;
    plan.groups = r.n_out == 0 ? 0 : rows ? r.n_out : (r.n_out + kReduceWG - 1) / kReduceWG;
    return plan;
  }
  const int axis = call.kind == OpKind::Softmax || call.kind == OpKind::LogSoftmax ? static_cast<int>(call.attrs.axis)
                                                                                   : x.dim() - 1;
  const int64_t n = x.size(axis);
  const uint32_t cache = cache_for(n);
  bool fast;
  if (call.kind == OpKind::Softmax || call.kind == OpKind::LogSoftmax) {
    s.log = call.kind == OpKind::LogSoftmax;
    fast = cache && n % 4 == 0 && (n == 1 || (x.strides()[axis] == 1 && r.out_istride == 1)) && aligned4(r.outer, x, y_off);
    s.kernel = fast ? ReduceKernel::SoftmaxRowV4 : ReduceKernel::Softmax;
  } else {
    const bool layer = call.kind == OpKind::LayerNorm;
    s.has_w = call.attrs.has_weight;
    s.has_b = call.attrs.has_bias;
    const Tensor* w = s.has_w ? &call.inputs[1] : nullptr;
    const Tensor* b = s.has_b ? &call.inputs[s.has_w ? 2 : 1] : nullptr;
    // The cached kernel reads weight/bias as vec4: they must be unit-stride and 16-byte aligned.
    auto vec_ok = [&](const Tensor* t) { return !t || ((t->strides()[0] == 1 || n == 1) && t->offset() % 4 == 0); };
    fast = cache && n % 4 == 0 && x.strides()[axis] == 1 && aligned4(r.outer, x, y_off) && vec_ok(w) && vec_ok(b);
    s.kernel = layer ? (fast ? ReduceKernel::LayerNormRowV4 : ReduceKernel::LayerNorm)
                     : (fast ? ReduceKernel::RmsNormRowV4 : ReduceKernel::RmsNorm);
  }
  if (fast) {
    s.cache = static_cast<uint8_t>(cache);
    s.sg = sg;
  }
  plan.groups = n == 0 ? 0 : r.n_out;
  return plan;
}

}  // namespace

ReduceRows reduce_rows(const OpCall& call) {
  const Tensor& x = call.inputs[0];
  ReduceRows r;
  std::vector<ReduceDim> outer, inner;
  if (call.kind == OpKind::Reduce) {
    std::vector<bool> reduced(x.dim(), call.attrs.axes.empty());
    for (int64_t a : call.attrs.axes) reduced.at(static_cast<size_t>(a)) = true;
    int64_t out_stride = 1;  // output is contiguous over the kept dims, in their order
    for (int d = x.dim() - 1; d >= 0; --d) {
      if (reduced[d]) {
        inner.insert(inner.begin(), {x.size(d), x.strides()[d], 0});
      } else {
        outer.insert(outer.begin(), {x.size(d), x.strides()[d], out_stride});
        out_stride *= x.size(d);
      }
    }
    inner = coalesce(inner);
  } else {
    // Softmax along attrs.axis, norms along the last dim; the output is contiguous.
    const bool softmax = call.kind == OpKind::Softmax || call.kind == OpKind::LogSoftmax;
    const int axis = softmax ? static_cast<int>(call.attrs.axis) : x.dim() - 1;
    const Strides ys = contiguous_strides(x.shape());
    for (int d = 0; d < x.dim(); ++d)
      if (d != axis) outer.push_back({x.size(d), x.strides()[d], ys[d]});
    inner = {{x.size(axis), x.strides()[axis], 0}};
    r.out_istride = softmax ? ys[axis] : 1;
  }
  r.outer = coalesce(outer);
  r.inner = std::move(inner);
  for (const ReduceDim& d : r.outer) r.n_out *= d.size;
  for (const ReduceDim& d : r.inner) r.n_red *= d.size;
  return r;
}

Planned<ReducePlan> plan_reduce(const Caps& caps, const ReduceTuning& tuning, const OpCall& call) {
  if (Support s = check(caps, call); !s.ok) return P::no(std::move(s.reason));
  bool has_f16 = false;
  for (const Tensor& t : call.inputs) has_f16 |= t.defined() && t.dtype() == DType::F16;
  P p;
  if (has_f16 && !caps.features.shader_f16) {
    p.plan = choose(caps, tuning, f32_twin(call));
    p.plan.f16_via_f32 = true;
  } else {
    p.plan = choose(caps, tuning, call);
  }
  return p;
}

PipelineKey ReducePlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant ReducePlan::variant() const {
  const ReduceShader& s = shader;
  auto tf = [](bool v) { return v ? "true" : "false"; };
  const char* t = s.f16 ? "f16" : "f32";
  ShaderVariant v;
  v.defines = {{"F16", tf(s.f16)}, {"T", t}};
  bool row = false;
  switch (s.kernel) {
    case ReduceKernel::Rows: v.shader = "reduce_rows"; break;
    case ReduceKernel::Cols: v.shader = "reduce_cols"; break;
    case ReduceKernel::RowV4: v.shader = "reduce_row_v4", row = true; break;
    case ReduceKernel::Softmax: v.shader = "softmax"; break;
    case ReduceKernel::SoftmaxRowV4: v.shader = "softmax_row_v4", row = true; break;
    case ReduceKernel::RmsNorm: v.shader = "rmsnorm"; break;
    case ReduceKernel::RmsNormRowV4: v.shader = "rmsnorm_row_v4", row = true; break;
    case ReduceKernel::LayerNorm: v.shader = "layernorm"; break;
    case ReduceKernel::LayerNormRowV4: v.shader = "layernorm_row_v4", row = true; break;
  }
  switch (s.kernel) {
    case ReduceKernel::Rows:
    case ReduceKernel::Cols:
    case ReduceKernel::RowV4:
      v.defines.push_back({"OUT_T", s.op == static_cast<uint8_t>(ReduceOp::ArgMax) ? "u32" : t});
      v.defines.push_back({"OP", std::to_string(s.op)});
      break;
    case ReduceKernel::Softmax:
    case ReduceKernel::SoftmaxRowV4: v.defines.push_back({"LOG", tf(s.log)}); break;
    case ReduceKernel::LayerNorm:
    case ReduceKernel::LayerNormRowV4: v.defines.push_back({"HAS_B", tf(s.has_b)}); [[fallthrough]];
    case ReduceKernel::RmsNorm:
    case ReduceKernel::RmsNormRowV4: v.defines.push_back({"HAS_W", tf(s.has_w)}); break;
  }
  if (row) {
    if (s.kernel != ReduceKernel::RowV4) v.defines.push_back({"CACHE", std::to_string(s.cache)});
    v.defines.push_back({"SG", tf(s.sg)});
  }
  return v;
}

}  // namespace wgt::webgpu
