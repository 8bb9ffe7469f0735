// plan_nn: the capability rules of the rope, silu_mul and KV-cache append kernels and the choice
// between the one-dispatch kernels and their compositions.
#include "webgpu/plans/nn_plan.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace wgt::webgpu {
namespace {

using P = Planned<NnPlan>;

const char* tf(bool v) { return v ? "true" : "false"; }

Support float_dtype(DType t, const char* what) {
  if (t != DType::F32 && t != DType::F16)
    return Support::no(std::string(what) + " dtype " + dtype_name(t) + " not supported (f32, f16)");
  return Support::yes();
}

// Element indices travel as u32.
Support small_enough(const OpCall& call) {
  for (const auto* list : {&call.inputs, &call.outputs})
    for (const Tensor& t : *list)
      if (t.defined() && t.storage()->nbytes() / dtype_size(t.dtype()) >= (uint64_t{1} << 31))
        return Support::no("more than 2^31 elements in one buffer");
  return Support::yes();
}

// The strides of an in-place x as [b, s, h, d] (b = 0 for a 3-D x). A dim of size 1 is never
// stepped along, so its stride is reported as 0 (it may be anything, even negative).
std::array<int64_t, 4> strides4(const Tensor& x) {
  std::array<int64_t, 4> st{0, 0, 0, 0};
  for (int k = 0; k < x.dim(); ++k)
    if (x.shape()[k] > 1) st[4 - x.dim() + k] = x.strides()[k];
  return st;
}

// Why rope_inplace.wgsl cannot write x in place, or "" when it can.
std::string rope_inplace_blocker(const Tensor& x) {
  const auto st = strides4(x);
  for (int64_t v : st)
    if (v < 0) return "in-place rope needs non-negative strides";
  if (x.dtype() != DType::F16) return "";
  // Packed f16: an invocation owns whole words only if every row starts at an even element
  // and its pairs are word pairs (unit stride along head_dim).
  if (st[3] != 1) return "in-place f16 rope needs unit stride along head_dim";
  if (x.offset() % 2 != 0 || st[0] % 2 != 0 || st[1] % 2 != 0 || st[2] % 2 != 0)
    return "in-place f16 rope needs rows starting at even elements (each row must own whole 32-bit words)";
  return "";
}

// Whether one dispatch can write the new rows of both caches: one dtype and shape for the
// caches and for the sources, and every written cache word belongs to the new rows alone (the
// usual case: an even row size).
bool whole_word_rows(const Tensor& kc, const Tensor& ks, const Tensor& vc, const Tensor& vs, int64_t pos) {
  const int64_t pw = kc.dtype() == DType::F16 ? 2 : 1;
  const int64_t dst = pos * kc.shape()[1] * kc.shape()[2], n = ks.numel();
  return kc.dtype() == vc.dtype() && ks.dtype() == vs.dtype() && vs.numel() == n && kc.shape() == vc.shape() &&
         dst % pw == 0 && n % pw == 0;
}

P plan_rope(const OpCall& call) {
  if (Support s = float_dtype(call.inputs[0].dtype(), "x"); !s.ok) return P::no(s.reason);
  if (const Tensor* pos = rope_positions(call); pos && pos->dtype() != DType::I32)
    return P::no("positions must be i32 on WebGPU (no 64-bit integers in WGSL)");
  if (call.attrs.pos_offset >= (int64_t{1} << 24)) return P::no("positions above 2^24 are not exact in f32");
  if (call.outputs.empty())
    if (std::string why = rope_inplace_blocker(call.inputs[0]); !why.empty()) return P::no(why);
  if (Support s = small_enough(call); !s.ok) return P::no(s.reason);
  return {plan_rope_call(call), {}};
}

P plan_silu_mul(const OpCall& call) {
  if (call.inputs.size() != 2) return P::no("silu_mul takes {a, b}");
  if (Support s = float_dtype(call.inputs[0].dtype(), "input"); !s.ok) return P::no(s.reason);
  if (call.inputs[1].dtype() != call.inputs[0].dtype()) return P::no("a and b differ in dtype");
  if (Support s = small_enough(call); !s.ok) return P::no(s.reason);
  P p;
  p.plan.shader.kernel = NnKernel::SiluMul;
  // The output's dtype: the call's output, else its spec.
  const DType out = !call.outputs.empty() ? call.outputs[0].dtype()
                    : !call.out_specs.empty() ? call.out_specs[0].second
                                              : call.inputs[0].dtype();
  p.plan.shader.f16 = out == DType::F16;
  return p;
}

// inputs {cache, src} or {k cache, k src, v cache, v src} (both caches of a decode step); with
// attrs.n_rot > 0 also q, {k cache, k src, v cache, v src, q} (KVCache::append_rope).
P plan_kv_append(const Caps& caps, const OpCall& call) {
  const bool rope = call.attrs.n_rot > 0;
  const size_t n_rope = 5 + (call.attrs.rope_factors ? 1 : 0);
  if (rope ? call.inputs.size() != n_rope : call.inputs.size() != 2 && call.inputs.size() != 4)
    return P::no("kv_append takes {cache, src}[, {cache, src}], or {k cache, k, v cache, v, q[, freq factors]} with rope");
  for (size_t i = 0; i + 1 < std::min<size_t>(call.inputs.size(), 4); i += 2) {
    const Tensor& cache = call.inputs[i];
    if (!cache.is_contiguous() || cache.offset() != 0) return P::no("cache buffer must be contiguous from offset 0");
    if (Support s = float_dtype(cache.dtype(), "cache"); !s.ok) return P::no(s.reason);
    if (Support s = float_dtype(call.inputs[i + 1].dtype(), "source"); !s.ok) return P::no(s.reason);
  }
  if (rope) {
    const Tensor& q = call.inputs[4];
    if (Support s = float_dtype(q.dtype(), "q"); !s.ok) return P::no(s.reason);
    if (call.attrs.pos_offset + call.inputs[1].shape()[0] > (int64_t{1} << 24))
      return P::no("positions above 2^24 are not exact in f32");
    if (std::string why = rope_inplace_blocker(q); !why.empty()) return P::no(why);
    if (q.storage() == call.inputs[0].storage() || q.storage() == call.inputs[2].storage())
      return P::no("q shares a cache's buffer");
  }
  if (Support s = small_enough(call); !s.ok) return P::no(s.reason);
  P p;
  NnShader& s = p.plan.shader;
  const int64_t pos = call.attrs.pos_offset;
  if (call.inputs.size() == 2) {
    p.plan = plan_kv_append_one(call.inputs[0], call.inputs[1]);
    return p;
  }
  const Tensor &kc = call.inputs[0], &ks = call.inputs[1], &vc = call.inputs[2], &vs = call.inputs[3];
  s.cache_f16 = kc.dtype() == DType::F16;
  s.src_f16 = ks.dtype() == DType::F16;
  if (!rope) {
    // One dispatch for both caches where every written word belongs to the new rows alone;
    // else one dispatch per cache, each keeping its neighbours' bits.
    if (whole_word_rows(kc, ks, vc, vs, pos)) s.kernel = NnKernel::KvAppend2;
    else p.plan.route = NnRoute::KvAppendEach;
    return p;
  }
  // RoPE + append: one dispatch when the rows are whole words and q either shares one buffer
  // with k and v (bound once, read_write) or shares none with them.
  const Tensor& q = call.inputs[4];
  // A strided k or v is compacted by the launcher into a buffer of its own.
  auto shares_q = [&](const Tensor& t) { return t.is_contiguous() && t.storage() == q.storage(); };
  const bool one = shares_q(ks) && shares_q(vs);
  const bool three = !shares_q(ks) && !shares_q(vs);
  // Storage buffers of the one-dispatch kernel: caches, sources (q, k, v in one or three), factors.
  const size_t n_storage = (one ? 3 : 5) + (call.attrs.rope_factors ? 1 : 0);
  if (!whole_word_rows(kc, ks, vc, vs, pos) || !(one || three) ||
      n_storage > caps.limits.max_storage_buffers_per_shader_stage) {
    p.plan.route = NnRoute::KvAppendRopeUnfused;
    return p;
  }
  s.kernel = NnKernel::KvAppendRope;
  s.q_f16 = q.dtype() == DType::F16;
  s.q_shared = one;
  s.freqs = call.attrs.rope_factors;
  return p;
}

// The freq factors of a rope kernel (rope_common's ROPE_FREQS): their binding after the
// kernel's n_storage other storage buffers, and the params after them; without factors the
// variant has neither the binding nor a division, so it is the kernel as it was.
void rope_freq_defines(ShaderVariant& v, bool freqs, size_t n_storage) {
  v.defines.push_back({"ROPE_FREQS", freqs ? "rope_freq_buffer" : "rope_freq_none"});
  if (freqs) {
    v.defines.push_back({"FREQ_BIND", std::to_string(n_storage)});
    v.defines.push_back({"FREQ_OFF", "params.f_off"});
  }
  v.defines.push_back({"P_BIND", std::to_string(n_storage + (freqs ? 1 : 0))});
}

}  // namespace

const Tensor* rope_positions(const OpCall& call) {
  return call.inputs.size() > (call.attrs.rope_factors ? 2u : 1u) ? &call.inputs[1] : nullptr;
}

int64_t rope_pairs_per_unit(DType t, const OpAttrs& a) {
  const int64_t half = a.n_rot / 2;
  if (t == DType::F16 && a.rope_neox) return half % 2 == 0 ? 2 : half;
  return 1;
}

NnPlan plan_rope_call(const OpCall& call) {
  NnPlan p;
  p.shader.kernel = call.outputs.empty() ? NnKernel::RopeInplace : NnKernel::Rope;
  p.shader.f16 = call.inputs[0].dtype() == DType::F16;
  p.shader.has_pos = rope_positions(call) != nullptr;
  p.shader.freqs = call.attrs.rope_factors;
  return p;
}

NnPlan plan_kv_append_one(const Tensor& cache, const Tensor& src) {
  NnPlan p;
  p.shader.kernel = NnKernel::KvAppend;
  p.shader.cache_f16 = cache.dtype() == DType::F16;
  p.shader.src_f16 = src.dtype() == DType::F16;
  return p;
}

Planned<NnPlan> plan_nn(const Caps& caps, const OpCall& call) {
  switch (call.kind) {
    case OpKind::Rope: return plan_rope(call);
    case OpKind::SiluMul: return plan_silu_mul(call);
    case OpKind::KVAppend: return plan_kv_append(caps, call);
    default: return P::no(std::string("no transformer kernel for ") + op_kind_name(call.kind));
  }
}

PipelineKey NnPlan::key() const {
  static const char family = 0;
  return make_key(&family, shader);
}

ShaderVariant NnPlan::variant() const {
  const NnShader& s = shader;
  const std::string out_pw = s.f16 ? "2" : "1";
  switch (s.kernel) {
    case NnKernel::Rope: {
      ShaderVariant v{"rope", {{"F16", tf(s.f16)}, {"HAS_POS", tf(s.has_pos)}}};
      rope_freq_defines(v, s.freqs, 3);
      v.defines.push_back({"OUT_PW", out_pw});
      return v;
    }
    case NnKernel::RopeInplace: {
      ShaderVariant v{"rope_inplace", {{"F16", tf(s.f16)}, {"POSITIONS", s.has_pos ? "rope_pos_buffer" : "rope_pos_offset"}}};
      rope_freq_defines(v, s.freqs, s.has_pos ? 2 : 1);
      return v;
    }
    case NnKernel::SiluMul: return {"silu_mul", {{"F16", tf(s.f16)}, {"OUT_PW", out_pw}}};
    case NnKernel::KvAppend:
      return {"attention_kv_append",
              {{"CACHE_F16", tf(s.cache_f16)}, {"SRC_F16", tf(s.src_f16)}, {"OUT_PW", s.cache_f16 ? "2" : "1"}}};
    case NnKernel::KvAppend2:
      return {"attention_kv_append2",
              {{"CACHE_F16", tf(s.cache_f16)}, {"SRC_F16", tf(s.src_f16)}, {"OUT_PW", s.cache_f16 ? "2" : "1"}}};
    case NnKernel::KvAppendRope: {
      ShaderVariant v{"attention_kv_append_rope",
                      {{"CACHE_F16", tf(s.cache_f16)},
                       {"SRC_F16", tf(s.src_f16)},
                       {"Q_F16", tf(s.q_f16)},
                       {"OUT_PW", s.cache_f16 ? "2" : "1"},
                       {"SOURCES", s.q_shared ? "attention_kv_rope_one" : "attention_kv_rope_three"}}};
      rope_freq_defines(v, s.freqs, s.q_shared ? 3 : 5);
      return v;
    }
  }
  return {};
}

}  // namespace wgt::webgpu
