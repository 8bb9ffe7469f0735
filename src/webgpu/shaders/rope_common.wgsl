// The RoPE angle and rotation shared by rope.wgsl, rope_inplace.wgsl and
// attention_kv_append_rope.wgsl (included, not a kernel), so that every path rotates with the
// same expression and gives the same bits on one adapter. Formula in docs/transformer.md.

// theta_i = pos * freq_scale * base^(-2i / n_rot), with base^x as exp2(x * log2(base)) and
// log2(base) computed on the host in double.
fn rope_theta(pos: f32, i: u32, n_rot: u32, freq_scale: f32, base_log2: f32) -> f32 {
  return pos * freq_scale * exp2(-2.0 * f32(i) / f32(n_rot) * base_log2);
}

// The pair (a, b) rotated by theta: (a cos - b sin, a sin + b cos).
fn rope_rotate(a: f32, b: f32, theta: f32) -> vec2<f32> {
  let c = cos(theta);
  let sn = sin(theta);
  return vec2<f32>(a * c - b * sn, a * sn + b * c);
}
