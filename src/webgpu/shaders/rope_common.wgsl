// The RoPE angle and rotation shared by rope.wgsl, rope_inplace.wgsl and
// attention_kv_append_rope.wgsl (included, not a kernel), so that every path rotates with the
// same expression and gives the same bits on one adapter. Formula in docs/transformer.md.
// Defines: ROPE_FREQS (rope_freq_none, or rope_freq_buffer with the per-frequency factors
// f_i and its own defines), which provides rope_freq_div.
#include "{{ROPE_FREQS}}"
#include "angle_reduce"

// theta_i = pos * freq_scale * base^(-2i / n_rot) / f_i, with base^x as exp2(x * log2(base))
// and log2(base) computed on the host in double (f_i = 1 without factors: no division at all).
// The angle is f32, so it is off by a few ulps of itself (~3e-7 * pos * freq_scale radians;
// the CPU reference computes it in double): docs/transformer.md gives the bound the tests use.
// It is returned reduced modulo 2 pi to [-pi, pi] exactly (angle_reduce.wgsl), because a GPU's
// sin / cos reduce a large argument coarsely on their own (on the H200 that doubled the error
// at position 1000).
fn rope_theta(pos: f32, i: u32, n_rot: u32, freq_scale: f32, base_log2: f32) -> f32 {
  return reduce_2pi(rope_freq_div(pos * freq_scale * exp2(-2.0 * f32(i) / f32(n_rot) * base_log2), i));
}

// The pair (a, b) rotated by theta: (a cos - b sin, a sin + b cos).
fn rope_rotate(a: f32, b: f32, theta: f32) -> vec2<f32> {
  let c = cos(theta);
  let sn = sin(theta);
  return vec2<f32>(a * c - b * sn, a * sn + b * c);
}

// Dims (a, b) of rotation pair i: (2i, 2i + 1) interleaved, (i, i + n_rot / 2) for neox.
fn rope_pair(i: u32, n_rot: u32, neox: bool) -> vec2<u32> {
  if (neox) { return vec2<u32>(i, i + n_rot / 2u); }
  return vec2<u32>(2u * i, 2u * i + 1u);
}

// Where dim di (< n_rot) sits in its pair: (pair index i, partner dim, 1 if di is the pair's
// first element a else 0).
fn rope_place(di: u32, n_rot: u32, neox: bool) -> vec3<u32> {
  if (neox) {
    let half = n_rot / 2u;
    if (di < half) { return vec3<u32>(di, di + half, 1u); }
    return vec3<u32>(di - half, di - half, 0u);
  }
  return vec3<u32>(di / 2u, di ^ 1u, select(0u, 1u, (di & 1u) == 0u));
}

// The rotated value of dim di from its own value v and its partner's value w.
fn rope_value(v: f32, w: f32, pl: vec3<u32>, theta: f32) -> f32 {
  let first = pl.z == 1u;
  let r = rope_rotate(select(w, v, first), select(v, w, first), theta);
  return select(r.y, r.x, first);
}
