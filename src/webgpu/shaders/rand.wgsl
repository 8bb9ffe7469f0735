// Counter-based random numbers, shared definition with the CPU reference ("wgt rng v1"):
//   mix32(x): x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16
//   word(seed, c) = mix32(mix32(mix32(c) ^ lo32(seed)) ^ hi32(seed))      (all mod 2^32)
//   u01(w) = f32(w >> 8) * 2^-24                                           (exact, [0, 1))
//   uniform: out[i] = low + (high - low) * u01(word(seed, i))              (f32 arithmetic)
//   normal:  u1 = u01(word(seed, 2i)), u2 = u01(word(seed, 2i + 1)),
//            out[i] = mean + stddev * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)
// The integer stream and u01 are bit-exact on every backend; the float transforms are
// within a few ulps (GPU log/cos/fma differ from libm). Bindings: out, params.
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
fn rng_word(c: u32) -> u32 { return mix32(mix32(mix32(c) ^ params.u0) ^ params.u1); }
fn u01(w: u32) -> f32 { return f32(w >> 8u) * (1.0 / 16777216.0); }

fn compute_bits(e: u32) -> u32 {
  var v: f32;
  if ({{NORMAL}}) {
    let u1 = u01(rng_word(2u * e));
    let u2 = u01(rng_word(2u * e + 1u));
    v = params.f0 + params.f1 * (sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2));
  } else {
    v = params.f0 + (params.f1 - params.f0) * u01(rng_word(e));
  }
  return {{STORE}}(v);
}
#include "ew_main"
