// Counter-based random numbers: the algorithm of src/cpu/reference/random.hpp (u32 only).
//   hash(i) = mix32(mix32(key ^ i_lo) ^ i_hi), key = mix32(mix32(0x243F6A88 ^ seed_lo) ^ seed_hi)
//   (key computed on the host, params.u0; i < 2^32 here so i_hi = 0).
//   uniform: low + (high - low) * (hash(i) >> 8) * 2^-24
//   normal:  u1 = ((hash(2i) >> 8) + 1) * 2^-24, u2 = (hash(2i+1) >> 8) * 2^-24,
//            mean + stddev * sqrt(-2 ln u1) * cos(2 pi u2)
// The hashes and u are bit-exact with the CPU; the value is f32 arithmetic (the reference
// rounds once from double), so it agrees to a few ulp. Bindings: out, params.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
#include "ew_common"

fn mix32(v: u32) -> u32 {
  var x = v;
  x = x ^ (x >> 16u);
  x = x * 0x7feb352du;
  x = x ^ (x >> 15u);
  x = x * 0x846ca68bu;
  x = x ^ (x >> 16u);
  return x;
}
fn rng_hash(i: u32) -> u32 { return mix32(mix32(params.u0 ^ i) ^ 0u); }
fn u01(w: u32) -> f32 { return f32(w >> 8u) * (1.0 / 16777216.0); }

fn compute_bits(e: u32) -> u32 {
  var v: f32;
  if ({{NORMAL}}) {
    let u1 = f32((rng_hash(2u * e) >> 8u) + 1u) * (1.0 / 16777216.0);
    let u2 = u01(rng_hash(2u * e + 1u));
    v = params.f0 + params.f1 * (sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
  } else {
    v = params.f0 + (params.f1 - params.f0) * u01(rng_hash(e));
  }
  return {{STORE}}(v);
}
#include "ew_main"
