// Inputs of the attention kernels that read Q/K/V (prefill, decode), included: bindings 0..3
// and their loads. Every operand is array<u32> holding f32 or packed f16 (ew_f16), chosen by
// the defines Q_F16, K_F16 (K and V) and M_F16 (mask); f16 is widened to f32 on load.
#include "ew_f16"

const Q_F16: bool = {{Q_F16}};
const K_F16: bool = {{K_F16}};
const M_F16: bool = {{M_F16}};

@group(0) @binding(0) var<storage, read> q: array<u32>;
@group(0) @binding(1) var<storage, read> k: array<u32>;
@group(0) @binding(2) var<storage, read> v: array<u32>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;

fn ld_q(i: u32) -> f32 {
  if (Q_F16) { return f16_at(q[i >> 1u], i); }
  return bitcast<f32>(q[i]);
}
fn ld_k(i: u32) -> f32 {
  if (K_F16) { return f16_at(k[i >> 1u], i); }
  return bitcast<f32>(k[i]);
}
fn ld_v(i: u32) -> f32 {
  if (K_F16) { return f16_at(v[i >> 1u], i); }
  return bitcast<f32>(v[i]);
}
fn ld_m(i: u32) -> f32 {
  if (M_F16) { return f16_at(mask[i >> 1u], i); }
  return bitcast<f32>(mask[i]);
}
