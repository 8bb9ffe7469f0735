#include "webgpu/plans/rope_append.hpp"

namespace wgt::webgpu {

std::string check_rope_append(const OpCall& call, int64_t rows, int64_t n_out) {
  if (call.inputs.size() < 4) return "the rope_append epilogue takes the two caches after x and the weight";
  if (rows != 1) return "the rope_append epilogue takes one row (a decode step)";
  const Tensor &kc = call.inputs[2], &vc = call.inputs[3];
  for (const Tensor* c : {&kc, &vc}) {
    if (c->dim() != 3 || !c->is_contiguous() || c->offset() != 0 || (c->dtype() != DType::F32 && c->dtype() != DType::F16))
      return "the caches must be contiguous f32 or f16 [C, Hkv, D] from offset 0";
  }
  if (kc.shape() != vc.shape() || kc.dtype() != vc.dtype()) return "the caches must share shape and dtype";
  if (kc.numel() >= (int64_t{1} << 31)) return "more than 2^31 elements in one cache";
  if (kc.storage() == vc.storage()) return "the caches and the output must be distinct buffers";
  if (!call.outputs.empty() && call.outputs[0].defined() && call.outputs[0].storage() &&
      (call.outputs[0].storage() == kc.storage() || call.outputs[0].storage() == vc.storage()))
    return "the caches and the output must be distinct buffers";
  const int64_t D = kc.shape()[2], kvn = kc.shape()[1] * D, qn = n_out - 2 * kvn;
  if (qn <= 0 || qn % D != 0) return "the output must be [1, (H + 2 Hkv) * D]";
  if (call.attrs.n_rot % 2 != 0 || call.attrs.n_rot > D) return "n_rot must be even and <= D";
  const int64_t pos = call.attrs.pos_offset;
  if (pos < 0 || pos >= kc.shape()[0]) return "the cache row is out of range";
  if (pos >= (int64_t{1} << 24)) return "positions above 2^24 are not exact in f32";
  return {};
}

}  // namespace wgt::webgpu
