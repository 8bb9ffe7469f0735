// y = silu(a) * b elementwise on contiguous operands (the SwiGLU gate), f32 or packed f16
// (ew_f16). Entry point ew_main (one invocation per output word). Defines: F16, OUT_PW.
#include "ew_f16"

struct Params { n: u32, a_off: u32, out_off: u32, b_off: u32, }

const F16: bool = {{F16}};

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

fn compute_bits(e: u32) -> u32 {
  let ia = params.a_off + e;
  let ib = params.b_off + e;
  if (F16) {
    let x = f16_at(a[ia >> 1u], ia);
    return f16_bits(x / (1.0 + exp(-x)) * f16_at(b[ib >> 1u], ib));
  }
  let x = bitcast<f32>(a[ia]);
  return bitcast<u32>(x / (1.0 + exp(-x)) * bitcast<f32>(b[ib]));
}
#include "ew_main"
