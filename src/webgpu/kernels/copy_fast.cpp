// vec4 copy for contiguous -> contiguous Copy (shaders/copy_vec4.wgsl); called by the Copy
// launcher in kernels/elementwise.cpp before its general strided kernel.
#include "webgpu/kernels/copy_fast.hpp"

#include <cstdint>

namespace wgt::webgpu {
namespace {
struct CopyParams {
  uint32_t n, in_off, out_off, pad;
};
static_assert(sizeof(CopyParams) == 16, "must match the WGSL Params struct");
}  // namespace

bool copy_contiguous_vec4(Context& ctx, const Tensor& x, const Tensor& out) {
  if (x.dtype() != out.dtype() || x.numel() != out.numel() || !x.is_contiguous() || !out.is_contiguous()) return false;
  const uint64_t es = dtype_size(x.dtype());
  const uint64_t bytes = static_cast<uint64_t>(x.numel()) * es;
  const uint64_t in_b = static_cast<uint64_t>(x.offset()) * es, out_b = static_cast<uint64_t>(out.offset()) * es;
  if (bytes == 0 || bytes % 16 || in_b % 16 || out_b % 16) return false;
  // Offsets and count travel as u32 vec4 indices.
  if ((in_b + bytes) / 16 > UINT32_MAX || (out_b + bytes) / 16 > UINT32_MAX) return false;
  CopyParams p{static_cast<uint32_t>(bytes / 16), static_cast<uint32_t>(in_b / 16), static_cast<uint32_t>(out_b / 16), 0};
  Dispatch d;
  d.pipeline = ctx.pipeline({"copy_vec4", {}});
  d.args = {ctx.arg(x), ctx.arg(out, false)};
  d.params = &p;
  d.params_size = sizeof p;
  auto [gx, gy] = ctx.grid((uint64_t{p.n} + 255) / 256);
  d.groups_x = gx;
  d.groups_y = gy;
  ctx.dispatch(d);
  return true;
}

}  // namespace wgt::webgpu
