// The two halves of a MatMul / QMatMul with a prologue (OpAttrs::prologue), for backends that
// run the prologue as its own op: the RMSNorm or SiluMul call on the first operand, and the
// plain call on its result. One definition, so every backend splits a call the same way.
#include "wgt/backend.hpp"

namespace wgt {

OpCall prologue_call(const OpCall& call, Tensor out) {
  const Tensor& a = call.inputs[0];
  const bool norm = call.attrs.prologue == OpAttrs::Prologue::RmsNorm;
  OpCall pc{norm ? OpKind::RMSNorm : OpKind::SiluMul, norm ? "rms_norm" : "silu_mul", {a, call.inputs.back()},
            {std::move(out)}, {}};
  pc.attrs.has_weight = norm;
  pc.attrs.eps = call.attrs.eps;
  pc.attrs.axis = a.dim() - 1;
  return pc;
}

OpCall without_prologue(const OpCall& call, Tensor transformed) {
  OpCall plain = call;
  plain.inputs[0] = std::move(transformed);
  plain.inputs.pop_back();
  plain.attrs.prologue = OpAttrs::Prologue::None;
  return plain;
}

}  // namespace wgt
