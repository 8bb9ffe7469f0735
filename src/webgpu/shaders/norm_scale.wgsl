// Row normalizations without f32 overflow (docs/semantics.md): statistics of x / scale, with
// scale = max|x| of the row when that exceeds 1 (else 1, so small rows keep eps exact).
// RMSNorm: 1 / sqrt(mean(x^2) + eps) = 1 / (scale * sqrt(mean((x/scale)^2) + eps / scale^2)),
// so rms_norm([3e19, 1, 1, 1]) is finite, as on the CPU (which sums in double). An infinite
// element counts as 1 (inf / inf): the row's factor is then 0 (finite x -> 0, inf -> NaN),
// and a NaN anywhere makes the row NaN, both as the CPU's unscaled formula gives.
// LayerNorm: with u = x / scale, (x - mean(x)) / sqrt(var(x) + eps) =
// (u - mean(u)) / sqrt(var(u) + eps / scale^2), so [1e38, -1e38, 0] stays finite; an infinite
// element makes the row NaN (inf / inf), as the CPU's mean gives.
// The statistics are taken around a pivot, the row's first u (shift invariance: var(u) =
// var(u - u0)), so a constant row gives exactly 0 (as the CPU's double mean does) instead of
// rounding noise amplified by 1 / sqrt(eps / scale^2); ln_inv then maps a zero variance with an
// underflowed eps / scale^2 (every u - mean exactly 0) to 0 rather than 0 * inf.
fn ln_inv(var_u: f32, eps: f32, scale: f32) -> f32 {
  let den = var_u + eps / scale / scale;
  return select(inverseSqrt(den), 0.0, den == 0.0);
}
// A division, not a product with 1 / scale: that reciprocal is subnormal for scale > 8.5e37.
fn norm_scale(maxabs: f32) -> f32 { return select(1.0, maxabs, maxabs > 1.0); }
fn rms_scale(maxabs: f32) -> f32 { return norm_scale(maxabs); }
// v / scale without forming 1 / scale: GPUs divide through a reciprocal, which for scale >
// 2^126 is subnormal and flushed to 0 (the H200 did: rms_norm([3e38, -3e38, 1, 2]) gave inf).
// The power of two of scale is applied exactly with ldexp, then the division is by its
// mantissa in [0.5, 1). scale 1 (small rows) returns v itself; an infinite or NaN scale divides
// as is (finite / inf = 0, inf / inf = NaN, as the unscaled formulas give).
fn div_scale(v: f32, scale: f32) -> f32 {
  if (scale == 1.0 || (bitcast<u32>(scale) & 0x7f800000u) == 0x7f800000u) { return select(v / scale, v, scale == 1.0); }
  let f = frexp(scale);
  return ldexp(v, -f.exp) / f.fract;
}
fn div_scale4(v: vec4<f32>, scale: f32) -> vec4<f32> {
  return vec4<f32>(div_scale(v.x, scale), div_scale(v.y, scale), div_scale(v.z, scale), div_scale(v.w, scale));
}
fn rms_scaled(v: f32, scale: f32) -> f32 {
  if ((bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u) { return 1.0; }
  return div_scale(v, scale);
}
// The factor applied to x itself (the fused matvec prologues): 1 / (scale * rms(x / scale)).
// For scale > ~1e38 it is subnormal (0 on GPUs that flush): those prologues' documented limit.
fn rms_inv(ss_scaled: f32, n: f32, eps: f32, scale: f32) -> f32 {
  return 1.0 / (scale * sqrt(ss_scaled / n + eps / scale / scale));
}
// The factor applied to x / scale (div_scale), so that no step leaves the normal range:
// rms_norm's output is div_scale(x, scale) * rms_inv_scaled(...).
fn rms_inv_scaled(ss_scaled: f32, n: f32, eps: f32, scale: f32) -> f32 {
  return 1.0 / sqrt(ss_scaled / n + eps / scale / scale);
}
// Is an unscaled f32 sum of squares usable (finite)? The fused norm prologues sum plain
// squares (their hot loop stays as it is) and redo the row scaled only where this fails.
fn ssq_finite(ss: f32) -> bool { return (bitcast<u32>(ss) & 0x7f800000u) != 0x7f800000u; }  // not inf / NaN
