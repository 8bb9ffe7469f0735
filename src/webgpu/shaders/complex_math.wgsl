// complex64 arithmetic shared by complex_ew.wgsl and complex_reduce.wgsl (included, not a
// kernel). A value is vec2<f32>(re, im). The definitions are the CPU reference's (which computes
// in double): docs/semantics.md, "Complex (c64)". The includer's `params` has a `zero` field
// that is always 0: NaN and inf are built from it at run time (WGSL rejects non-finite
// constants) and `0 * x` keeps IEEE meaning (0 * inf = NaN) where a compiler could fold a literal.
#include "angle_reduce"
#include "fdiv"

fn cx_nan_f() -> f32 { return bitcast<f32>(0x7fc00000u | params.zero); }
fn cx_inf_f() -> f32 { return bitcast<f32>(0x7f800000u | params.zero); }
fn cx_zero_f() -> f32 { return bitcast<f32>(params.zero); }
// NaN / inf tests on the bits: drivers may fold `x != x` or use ordered compares.
fn cx_is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn cx_is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn cx_is_fin(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }
// x != 0 on the bits: a device that flushes subnormal operands compares 1e-38 equal to 0, which
// would send a subnormal divisor down the division-by-zero path.
fn cx_nonzero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) != 0u; }
fn cx_copysign(m: f32, s: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(m) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}
fn cx_mul(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}

// p / q for cx_div's special cases: where the CPU's double ratio is nonzero (the unscaled p,
// p0, is nonzero and q finite) but the f32 one underflows (or p did when scaled), the
// smallest normal with its sign instead, so that inf * ratio stays inf as in double (every
// part it enters also has an inf or NaN term, so its size does not matter).
fn cx_ratio(p: f32, q: f32, p0: f32) -> f32 {
  let r = p / q;
  if (r == 0.0 && cx_nonzero(p0) && cx_is_fin(q)) {
    let neg = ((bitcast<u32>(p) ^ bitcast<u32>(q)) & 0x80000000u) != 0u;
    return select(1.0, -1.0, neg) * f32_pow2(-126);
  }
  return r;
}

// Smith's division of finite values by a nonzero divisor, in f32 without spurious over- or
// underflow: the denominator is formed from the divisor scaled to [1, 2) (undone at the end),
// the numerator halved where a sum of its terms could overflow (doubled back), and a * c / d
// taken as (a / d) * c where the ratio c / d underflows, so each part keeps its own accuracy
// even when the parts differ by more than the f32 range ((3e38 + 1e-30 i) / 1e-30 i =
// 1 - inf i).
fn cx_div_finite(a: f32, b: f32, c: f32, d: f32) -> vec2<f32> {
  // Every power-of-two scaling is f32_ldexp's: as products, NVIDIA's compiler folded them into
  // their neighbours (the divisor's scaling out of d * ratio + c, which then overflowed). The
  // divisor's order and ratio are taken on the scaled parts, which are normal even where c and
  // d are subnormal (a device that flushes subnormal operands would see a zero divisor).
  let ed = min(max(f32_expo(max(abs(c), abs(d))), -126), 126);
  let cs = f32_ldexp(c, -ed);
  let ds = f32_ldexp(d, -ed);
  let big = max(abs(a), abs(b)) >= 8.507059e37;  // 2^126: a * ratio + b may overflow
  let na = select(a, f32_ldexp(a, -1), big);
  let nb = select(b, f32_ldexp(b, -1), big);
  var x: f32;
  var y: f32;
  if (abs(cs) < abs(ds)) {
    let ratio = fdiv(cs, ds);
    let den = cs * ratio + ds;
    var ar = na * ratio;
    var br = nb * ratio;
    if (ratio == 0.0 && cx_nonzero(c)) {
      ar = fdiv(na, d) * c;
      br = fdiv(nb, d) * c;
    }
    x = (ar + nb) / den;
    y = (br - na) / den;
  } else {
    let ratio = fdiv(ds, cs);
    let den = ds * ratio + cs;
    var ar = na * ratio;
    var br = nb * ratio;
    if (ratio == 0.0 && cx_nonzero(d)) {
      ar = fdiv(na, c) * d;
      br = fdiv(nb, c) * d;
    }
    x = (br + na) / den;
    y = (nb - ar) / den;
  }
  let k = select(0, 1, big) - ed;  // quotient = (x, y) * 2^k
  return vec2<f32>(f32_ldexp(x, k), f32_ldexp(y, k));
}

// x / y. Finite operands with a nonzero divisor: cx_div_finite (|q| beyond the f32 range gives
// inf, as the CPU's rounding of its double result does). Every other case (inf, NaN, zero divisor) runs the CPU's
// algorithm literally (libgcc's __divdc3: Smith's division, then C99 Annex G's recovery of
// infinities and zeros from a NaN + NaN i result), so its special values are the CPU's.
fn cx_div(x: vec2<f32>, y: vec2<f32>) -> vec2<f32> {
  let a = x.x;
  let b = x.y;
  let c0 = y.x;
  let d0 = y.y;
  if (cx_is_fin(a) && cx_is_fin(b) && cx_is_fin(c0) && cx_is_fin(d0) && (cx_nonzero(c0) || cx_nonzero(d0))) {
    return cx_div_finite(a, b, c0, d0);
  }
  // A finite nonzero divisor is scaled to magnitude [1, 2) (and the quotient back): the
  // CPU's double intermediates (d * ratio + c) never overflow, f32 ones would.
  var es = 0;  // the divisor is scaled by 2^-es (on the bits, as in cx_div_finite)
  var c = c0;
  var d = d0;
  if (cx_is_fin(c) && cx_is_fin(d) && (cx_nonzero(c) || cx_nonzero(d))) {
    es = min(max(f32_expo(max(abs(c), abs(d))), -126), 126);
    c = f32_ldexp(c, -es);
    d = f32_ldexp(d, -es);
  }
  var re: f32;
  var im: f32;
  if (abs(c) < abs(d)) {
    let ratio = cx_ratio(c, d, c0);
    let denom = c * ratio + d;
    if (abs(ratio) > 0.0) {
      re = (a * ratio + b) / denom;
      im = (b * ratio - a) / denom;
    } else {
      re = (c * (a / d) + b) / denom;
      im = (c * (b / d) - a) / denom;
    }
  } else {
    let ratio = cx_ratio(d, c, d0);
    let denom = d * ratio + c;
    if (abs(ratio) > 0.0) {
      re = (b * ratio + a) / denom;
      im = (b - a * ratio) / denom;
    } else {
      re = (a + d * (b / c)) / denom;
      im = (b - d * (a / c)) / denom;
    }
  }
  // C99 Annex G's recovery, on the unscaled divisor (its tiny parts matter here); its results
  // are infinities, zeros or NaN, which the final scaling leaves as they are.
  if (cx_is_nan(re) && cx_is_nan(im)) {
    let inf = cx_inf_f();
    if (!cx_nonzero(c0) && !cx_nonzero(d0) && (!cx_is_nan(a) || !cx_is_nan(b))) {
      let s = cx_copysign(inf, c0);
      return vec2<f32>(s * a, s * b);
    } else if ((cx_is_inf(a) || cx_is_inf(b)) && cx_is_fin(c0) && cx_is_fin(d0)) {
      let a1 = cx_copysign(select(0.0, 1.0, cx_is_inf(a)), a);
      let b1 = cx_copysign(select(0.0, 1.0, cx_is_inf(b)), b);
      re = inf * (a1 * c0 + b1 * d0);
      im = inf * (b1 * c0 - a1 * d0);
    } else if ((cx_is_inf(c0) || cx_is_inf(d0)) && cx_is_fin(a) && cx_is_fin(b)) {
      // Only the signs of the sums matter (0 * them): the numerator scaled to [1, 2) keeps
      // them finite where the CPU's double sums are.
      let sn = f32_pow2(-min(max(f32_expo(max(abs(a), abs(b))), -126), 126));
      let c1 = cx_copysign(select(0.0, 1.0, cx_is_inf(c0)), c0);
      let d1 = cx_copysign(select(0.0, 1.0, cx_is_inf(d0)), d0);
      let z = cx_zero_f();
      re = z * (a * sn * c1 + b * sn * d1);
      im = z * (b * sn * c1 - a * sn * d1);
    }
  }
  return vec2<f32>(f32_ldexp(re, -es), f32_ldexp(im, -es));
}

// |z| = hypot(re, im): inf if either part is infinite (even beside a NaN), else NaN if either
// is NaN; otherwise computed on the parts scaled by a power of two, so neither square over-
// or underflows.
fn cx_abs(z: vec2<f32>) -> f32 {
  let x = abs(z.x);
  let y = abs(z.y);
  if (cx_is_inf(x) || cx_is_inf(y)) { return cx_inf_f(); }
  if (cx_is_nan(x) || cx_is_nan(y)) { return cx_nan_f(); }
  let m = max(x, y);
  if (m == 0.0) { return 0.0; }
  let e = min(max(f32_expo(m), -126), 126);
  let xs = x * f32_pow2(-e);
  let ys = y * f32_pow2(-e);
  return sqrt(xs * xs + ys * ys) * f32_pow2(e);
}

// exp(x) * s without the overflow of exp(x) alone (exp(x) is beyond f32 for x > 88.7 while
// exp(x) cos(y) may not be); a zero s stays a (signed) zero, as in the CPU's cexp. With
// h = exp(x / 2) = hm 2^e (hm in [1, 2)), the product is (hm hm s) 2^(2e): no grouping of the
// three factors can overflow, and the scaling is on the bits (a driver may regroup products:
// NVIDIA's turned (h s) h into (h h) s = inf).
fn cx_exp_mul(x: f32, s: f32) -> f32 {
  if (s == 0.0) { return s; }
  let h = exp(0.5 * x);
  if (!cx_is_fin(h) || h == 0.0) { return (h * s) * h; }
  let e = f32_expo(h);
  let hm = f32_ldexp(h, -e);
  return f32_ldexp(hm * hm * s, 2 * e);
}

// sin of a reduced angle. Below 2^-12 it is the angle itself (the next term, r^3 / 6, is under
// half an ulp): WGSL bounds sin's error only absolutely (2^-11), and NVIDIA's returned 0 for
// sin(1e-30), which turned e^(3e38 + 1e-30 i)'s imaginary part inf * 1e-30 = inf into 0.
fn cx_sin(r: f32) -> f32 { return select(sin(r), r, abs(r) < 2.44140625e-4); }

// e^z with C99 Annex G's special values (glibc cexp, which the CPU reference calls).
fn cx_exp(z: vec2<f32>) -> vec2<f32> {
  let x = z.x;
  let y = z.y;
  let nan = cx_nan_f();
  if (cx_is_fin(x)) {
    if (!cx_is_fin(y)) { return vec2<f32>(nan, nan); }
    if (y == 0.0) { return vec2<f32>(exp(x), y); }
    let r = reduce_2pi(y);
    return vec2<f32>(cx_exp_mul(x, cos(r)), cx_exp_mul(x, cx_sin(r)));
  }
  if (cx_is_inf(x)) {
    if (cx_is_fin(y)) {
      let v = select(cx_inf_f(), 0.0, x < 0.0);
      if (y == 0.0) { return vec2<f32>(v, y); }
      let r = reduce_2pi(y);
      return vec2<f32>(cx_copysign(v, cos(r)), cx_copysign(v, cx_sin(r)));
    }
    if (x > 0.0) { return vec2<f32>(cx_inf_f(), nan); }
    return vec2<f32>(0.0, cx_copysign(0.0, y));
  }
  if (y == 0.0) { return vec2<f32>(nan, y); }
  return vec2<f32>(nan, nan);
}
