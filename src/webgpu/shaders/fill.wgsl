// Fill and Arange: out[e] = the value (f0 / i0), or with ARANGE start + e * step (f0 + e * f1 /
// i0 + e * i1). Bindings: out, params.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
#include "ew_common"

fn compute_bits(e: u32) -> u32 {
#if ARANGE && CT_I32
  let v: {{CT}} = params.i0 + i32(e) * params.i1;
#elif ARANGE
  let v: {{CT}} = params.f0 + f32(e) * params.f1;
#elif CT_I32
  let v: {{CT}} = params.i0;
#else
  let v: {{CT}} = params.f0;
#endif
  return {{STORE}}(v);
}
#include "ew_main"
