// Shared code of the elementwise kernels: the params block (mirrored by EwParams in
// kernels/elementwise.cpp), strided offsets, and dtype loads/stores on u32 words.
// Sub-word dtypes (f16, bf16, u8, bool) live packed in array<u32>: element i is slot
// i % per_word of word i / per_word. Computation happens in f32 (floats) or i32 (integers).

struct Params {
  n: u32,                                  // output elements
  rank: u32,                               // dims after collapsing (<= 8)
  out_off: u32,                            // output element offset in its buffer
  op: u32,
  off: vec4<u32>,                          // element offsets of inputs 0..2
  shape: array<vec4<u32>, 2>,              // output shape, outermost first
  strides: array<array<vec4<u32>, 2>, 3>,  // per input, in elements (0 = broadcast)
  f0: f32, f1: f32, i0: i32, i1: i32,      // scalars: fill value, arange start/step, rand range
  u0: u32, u1: u32, u2: u32, u3: u32,      // rand seed (lo, hi)
}

// Element offset of logical output index e inside input k.
fn in_offset(e: u32, k: u32) -> u32 {
  var rem = e;
  var off = params.off[k];
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let s = params.shape[du / 4u][du % 4u];
    off = off + (rem % s) * params.strides[k][du / 4u][du % 4u];
    rem = rem / s;
  }
  return off;
}

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
// f32 -> f16 with round-to-nearest-even, like the CPU's f32_to_f16 (NaN -> 0x7e00).
fn f16_bits(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) { return sign | 0x7e00u; }
  if (ax >= 0x477ff000u) { return sign | 0x7c00u; }
  if (ax < 0x38800000u) {
    if (ax < 0x33000000u) { return sign; }
    let e = ax >> 23u;
    let m = (ax & 0x7fffffu) | 0x800000u;
    let s = 126u - e;
    let q = m >> s;
    let rem = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    return sign | (q + select(0u, 1u, rem > half || (rem == half && (q & 1u) == 1u)));
  }
  let h = ((ax - 0x38000000u) >> 13u);
  let rest = ax & 0x1fffu;
  return sign | (h + select(0u, 1u, rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)));
}
// f32 -> bf16 with round-to-nearest-even (quiet NaN keeps its top bits).
fn bf16_bits(f: f32) -> u32 {
  let u = bitcast<u32>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return ((u >> 16u) | 0x40u) & 0xffffu; }
  return ((u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u) & 0xffffu;
}
fn st_f32_f32(v: f32) -> u32 { return bitcast<u32>(v); }
fn st_f16_f32(v: f32) -> u32 { return f16_bits(v); }
fn st_bf16_f32(v: f32) -> u32 { return bf16_bits(v); }
fn st_i32_f32(v: f32) -> u32 { return bitcast<u32>(i32(trunc(v))); }
fn st_u8_f32(v: f32) -> u32 { return u32(i32(trunc(v))) & 0xffu; }
fn st_bool_f32(v: f32) -> u32 { return select(0u, 1u, v != 0.0); }
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
// tanh clamped: some drivers compute tanh via exp and return NaN for large |x|.
fn tanh_f32(x: f32) -> f32 { return tanh(clamp(x, -15.0, 15.0)); }
fn sigmoid_f32(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
fn is_nan(x: f32) -> bool { return x != x; }
fn max_f32(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return a + b; } return max(a, b); }
fn min_f32(a: f32, b: f32) -> f32 { if (is_nan(a) || is_nan(b)) { return a + b; } return min(a, b); }
// pow with C semantics for negative bases, zero and integer exponents.
fn pow_f32(x: f32, y: f32) -> f32 {
  if (y == 0.0 || x == 1.0) { return 1.0; }
  if (is_nan(x) || is_nan(y)) { return x + y; }
  let r = pow(abs(x), y);
  if (x < 0.0) {
    if (trunc(y) != y) { return bitcast<f32>(0x7fc00000u); }
    let odd = abs(y) < 16777216.0 && (i32(abs(y)) & 1) == 1;
    return select(r, -r, odd);
  }
  if (x == 0.0) { return select(0.0, bitcast<f32>(0x7f800000u), y < 0.0); }
  return r;
}
