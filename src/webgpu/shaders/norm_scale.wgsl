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
fn rms_scaled(v: f32, scale: f32) -> f32 {
  if ((bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u) { return 1.0; }
  return v / scale;
}
fn rms_inv(ss_scaled: f32, n: f32, eps: f32, scale: f32) -> f32 {
  return 1.0 / (scale * sqrt(ss_scaled / n + eps / scale / scale));
}
// Is an unscaled f32 sum of squares usable (finite)? The fused norm prologues sum plain
// squares (their hot loop stays as it is) and redo the row scaled only where this fails.
fn ssq_finite(ss: f32) -> bool { return (bitcast<u32>(ss) & 0x7f800000u) != 0x7f800000u; }  // not inf / NaN
