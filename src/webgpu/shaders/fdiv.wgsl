// f32 division that stays IEEE-correct on drivers that divide as x * (1 / y) (included, not a
// kernel). NVIDIA's Vulkan driver does: its reciprocal flushes to zero for |y| > 2^126, so
// 3e38 / 3e38 gave 0 instead of 1 on the H200 (docs/semantics.md, "Division"). Taking y's
// exponent out first keeps the reciprocal in [0.5, 1]; the scalings are powers of two, exact
// except where the quotient itself is subnormal (which a device may flush anyway). y = 0, inf
// and NaN give what x / y gives: 0 * 2^126 stays 0, inf * 2^-126 stays inf.

// 2^k for k in [-126, 127] (clamped), from the exponent bits: exact, unlike exp2 on some drivers.
fn f32_pow2(k: i32) -> f32 { return bitcast<f32>(u32(clamp(k, -126, 127) + 127) << 23u); }
// e with 2^e <= |x| < 2^(e+1) for normal x (subnormals and zero give -127, inf and NaN 128).
fn f32_expo(x: f32) -> i32 { return i32((bitcast<u32>(x) >> 23u) & 0xffu) - 127; }

// x * 2^k done on the bits (any k): a product by a power of two that a driver's compiler may
// reassociate with the neighbouring products (NVIDIA's does: (h * s) * h became h * h * s and
// overflowed, q * 2^a * 2^b became q * 2^(a+b) and flushed) is immune here. Zero, inf and NaN
// come back as they are, subnormal x is normalized first, a result beyond f32 is inf with x's
// sign and a subnormal result keeps its leading bits (truncated: devices may flush it anyway).
fn f32_ldexp(x: f32, k: i32) -> f32 {
  let b = bitcast<u32>(x);
  let sign = b & 0x80000000u;
  var e = i32((b >> 23u) & 0xffu);
  var m = b & 0x7fffffu;
  if (e == 255 || (e == 0 && m == 0u)) { return x; }
  if (e == 0) {  // subnormal: shift the leading bit into the implicit position
    let sh = countLeadingZeros(m) - 8u;
    m = (m << sh) & 0x7fffffu;
    e = 1 - i32(sh);
  }
  let ne = e + clamp(k, -400, 400);
  if (ne >= 255) { return bitcast<f32>(sign | 0x7f800000u); }
  if (ne >= 1) { return bitcast<f32>(sign | (u32(ne) << 23u) | m); }
  if (ne < -23) { return bitcast<f32>(sign); }
  return bitcast<f32>(sign | ((m | 0x800000u) >> u32(1 - ne)));
}

fn fdiv(x: f32, y: f32) -> f32 {
  let s = f32_pow2(-clamp(f32_expo(y), -126, 126));
  return (x / (y * s)) * s;
}

fn fdiv4(x: vec4<f32>, y: vec4<f32>) -> vec4<f32> {
  let e = clamp(vec4<i32>((bitcast<vec4<u32>>(y) >> vec4<u32>(23u)) & vec4<u32>(0xffu)) - vec4<i32>(127), vec4<i32>(-126), vec4<i32>(126));
  let s = bitcast<vec4<f32>>(vec4<u32>(vec4<i32>(127) - e) << vec4<u32>(23u));
  return (x / (y * s)) * s;
}
