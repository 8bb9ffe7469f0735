#include "webgpu/kernels/rope_append_route.hpp"

namespace wgt::webgpu {

void run_rope_append_unfused(Context& ctx, OpCall& call) {
  Tensor& out = call.outputs[0];
  OpCall mm{call.kind, call.name, {call.inputs[0], call.inputs[1], call.inputs.back()}, {out}, call.attrs, 0.0, {}};
  mm.attrs.n_rot = 0;
  mm.attrs.rope_factors = false;
  ctx.run_op(mm);
  const Tensor &kc = call.inputs[2], &vc = call.inputs[3];
  const int64_t D = kc.size(2), kvn = kc.size(1) * D, qn = out.size(1) - 2 * kvn;
  OpCall ap{OpKind::KVAppend, "kv_append_rope",
            {kc, out.slice(1, qn, qn + kvn).view({1, kc.size(1), D}), vc,
             out.slice(1, qn + kvn, qn + 2 * kvn).view({1, kc.size(1), D}), out.slice(1, 0, qn).view({1, qn / D, D})},
            {}, call.attrs, 0.0, {}};
  if (call.attrs.rope_factors) ap.inputs.push_back(call.inputs[4]);
  ap.attrs.prologue = OpAttrs::Prologue::None;
  ctx.run_op(ap);
}

}  // namespace wgt::webgpu
