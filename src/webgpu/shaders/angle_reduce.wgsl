// a reduced modulo 2 pi to [-pi, pi] exactly, for |a| < 2 pi * 2^24 (Cody-Waite: 2 pi as three
// parts, the first two of 12 significant bits, and |k| < 2^24 split into two 12-bit halves, so
// every product is exact whether or not a compiler fuses it into an fma). GPUs' sin / cos reduce
// large arguments coarsely (WGSL specifies their accuracy only on [-pi, pi]): RoPE angles and the
// sin / cos ops reduce first, so their results match the CPU's on every adapter. inf and NaN
// give NaN, as sin / cos of them do.
fn reduce_2pi(a: f32) -> f32 {
  let k = round(a * 0.15915494);
  let kh = trunc(k / 4096.0);  // toward zero: |kl| < 4096 for either sign of a
  let kl = k - kh * 4096.0;
  var t = a - kh * 25736.0;            // 4096 * C1, C1 = 3217 / 512
  t = t - kl * 6.283203125;            // C1
  t = t - kh * -0.072967529296875;     // 4096 * C2
  t = t - kl * -1.7814338207244873e-5; // C2 (12 bits)
  return t - k * -3.482206523131026e-9; // C3 = 2 pi - C1 - C2
}
