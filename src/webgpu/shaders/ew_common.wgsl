// Shared code of the elementwise kernels: the params block (mirrored by EwParams in
// kernels/elementwise.cpp), strided offsets, and dtype loads/stores on u32 words.
// Sub-word dtypes (f16, bf16, u8, bool) live packed in array<u32>: element i is slot
// i % per_word of word i / per_word. Computation happens in f32 (floats) or i32 (integers).
#include "angle_reduce"

struct Params {
  n: u32,                                  // output elements
  rank: u32,                               // dims after collapsing (<= 8)
  out_off: u32,                            // output element offset in its buffer
  op: u32,
  off: vec4<u32>,                          // element offsets of inputs 0..2
  shape: array<vec4<u32>, 2>,              // output shape, outermost first
  strides: array<array<vec4<u32>, 2>, 3>,  // per input, in elements (0 = broadcast)
  f0: f32, f1: f32, i0: i32, i1: i32,      // scalars: fill value, arange start/step, rand range
  u0: u32, u1: u32, u2: u32, zero: u32,    // u0: rand key; zero: always 0 (see nan_f32)
}

#include "ew_offset"

// ---- loads: (word, slot) -> compute type ----
fn ld_f32_f32(w: u32, j: u32) -> f32 { return bitcast<f32>(w); }
fn ld_i32_f32(w: u32, j: u32) -> f32 { return f32(bitcast<i32>(w)); }
fn ld_f16_f32(w: u32, j: u32) -> f32 { return unpack2x16float(w)[j]; }
fn ld_bf16_f32(w: u32, j: u32) -> f32 { return bitcast<f32>(((w >> (16u * j)) & 0xffffu) << 16u); }
fn ld_u8_f32(w: u32, j: u32) -> f32 { return f32((w >> (8u * j)) & 0xffu); }
fn ld_bool_f32(w: u32, j: u32) -> f32 { return select(0.0, 1.0, ((w >> (8u * j)) & 0xffu) != 0u); }
fn ld_i32_i32(w: u32, j: u32) -> i32 { return bitcast<i32>(w); }
fn ld_u8_i32(w: u32, j: u32) -> i32 { return i32((w >> (8u * j)) & 0xffu); }
fn ld_bool_i32(w: u32, j: u32) -> i32 { return select(0, 1, ((w >> (8u * j)) & 0xffu) != 0u); }

// ---- stores: compute type -> element bits (low bits of the result) ----
// f16_bits (f32 -> f16, round to nearest even) lives in ew_f16.
#include "ew_f16"
// f32 -> bf16 with round-to-nearest-even (quiet NaN keeps its top bits).
fn bf16_bits(f: f32) -> u32 {
  let u = bitcast<u32>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return ((u >> 16u) | 0x40u) & 0xffffu; }
  return ((u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u) & 0xffffu;
}
fn st_f32_f32(v: f32) -> u32 { return bitcast<u32>(v); }
fn st_f16_f32(v: f32) -> u32 { return f16_bits(v); }
fn st_bf16_f32(v: f32) -> u32 { return bf16_bits(v); }
// float -> integer: truncate toward zero, saturate to the target's range, NaN -> 0 (the
// semantics of docs/semantics.md, shared with the CPU). Spelled out because WGSL leaves the
// conversion of NaN undefined (lavapipe gives INT_MIN) and the u8 store would wrap.
fn st_i32_f32(v: f32) -> u32 {
  if (is_nan(v)) { return 0u; }
  if (v >= 2147483648.0) { return 0x7fffffffu; }
  if (v <= -2147483648.0) { return 0x80000000u; }
  return bitcast<u32>(i32(trunc(v)));
}
fn st_u8_f32(v: f32) -> u32 {
  if (is_nan(v)) { return 0u; }
  return u32(clamp(trunc(v), 0.0, 255.0));
}
// NaN is truthy (C++, numpy): the test is on the bits because drivers may fold v != 0.0 into
// an ordered compare, which is false for NaN.
fn st_bool_f32(v: f32) -> u32 { return select(0u, 1u, v != 0.0 || is_nan(v)); }
fn st_f32_i32(v: i32) -> u32 { return bitcast<u32>(f32(v)); }
fn st_f16_i32(v: i32) -> u32 { return f16_bits(f32(v)); }
fn st_bf16_i32(v: i32) -> u32 { return bf16_bits(f32(v)); }
fn st_i32_i32(v: i32) -> u32 { return bitcast<u32>(v); }
fn st_u8_i32(v: i32) -> u32 { return u32(v) & 0xffu; }
fn st_bool_i32(v: i32) -> u32 { return select(0u, 1u, v != 0); }

// ---- math not built into WGSL ----
// erf: Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
fn erf_f32(x: f32) -> f32 {
  let a = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
  return select(y, -y, x < 0.0);
}
// tanh, accurate to a few ulp relative everywhere and NaN-propagating. Not the builtin:
// drivers compute it as (e^2x - 1) / (e^2x + 1), which loses every digit near 0 (lavapipe:
// tanh(1e-10) = 2.98e-8), may return NaN for large |x| and maps NaN to -1 after a clamp.
// |x| < 0.25: the odd Taylor series to x^11 (truncation < 1e-9 relative); else
// (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.61, which has no cancellation and tends to 1.
fn tanh_f32(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let a = abs(x);
  if (a < 0.25) {
    let x2 = x * x;
    let p = (((((-1382.0 / 155925.0) * x2 + 62.0 / 2835.0) * x2 - 17.0 / 315.0) * x2 + 2.0 / 15.0) * x2 - 1.0 / 3.0) * x2;
    return x + x * p;
  }
  let e = exp(-2.0 * a);
  let t = (1.0 - e) / (1.0 + e);
  return select(t, -t, x < 0.0);
}
fn sigmoid_f32(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
// relu on the bits: the NVIDIA compiler turns select(x, 0.0, x < 0.0) into max(x, 0.0), which
// drops NaN (seen on the H200); negative non-NaN values (sign set, magnitude <= inf) become 0.
fn relu_f32(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  return select(x, 0.0, (b & 0x80000000u) != 0u && (b & 0x7fffffffu) <= 0x7f800000u);
}
// NaN tests on the bits: drivers may fold `x != x` or use ordered compares (lavapipe does).
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
// IEEE comparisons: every comparison with NaN is false except !=.
fn cmp_f32(x: f32, y: f32, r: bool) -> f32 { return select(0.0, 1.0, r && !is_nan(x) && !is_nan(y)); }
fn ne_f32(x: f32, y: f32) -> f32 { return select(0.0, 1.0, is_nan(x) || is_nan(y) || x != y); }
// NaN/inf built at run time: WGSL rejects non-finite constant expressions.
fn nan_f32() -> f32 { return bitcast<f32>(0x7fc00000u | params.zero); }
fn inf_f32() -> f32 { return bitcast<f32>(0x7f800000u | params.zero); }
fn max_f32(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return a + b; } return max(a, b); }
fn min_f32(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return a + b; } return min(a, b); }
// pow with C semantics for negative bases, zero, infinities and integer exponents.
fn pow_f32(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return nan_f32(); }
  let odd = abs(y) < 16777216.0 && trunc(y) == y && (i32(abs(y)) & 1) == 1;
  if (is_inf(y)) {
    let ax = abs(x);
    if (ax == 1.0) { return 1.0; }
    return select(0.0, inf_f32(), (ax > 1.0) == (y > 0.0));
  }
  if (is_inf(x)) {
    let m = select(0.0, inf_f32(), y > 0.0);
    return select(m, -m, x < 0.0 && odd);
  }
  if (x == 0.0) {
    let m = select(0.0, inf_f32(), y < 0.0);
    return select(m, -m, odd && bitcast<u32>(x) == 0x80000000u);
  }
  let r = pow(abs(x), y);
  if (x < 0.0) {
    if (trunc(y) != y) { return nan_f32(); }
    return select(r, -r, odd);
  }
  return r;
}
