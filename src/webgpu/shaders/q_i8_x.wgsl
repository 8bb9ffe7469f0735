// Shared by the 8-bit-x weight sources of the streaming matvec (q_mv_stream_i8,
// q_mv_stream_i8w; included, not a kernel): quantization of x values to int8 codes with one
// scale per group, and NORM's ssq re-spread. Needs X2, NORM, WG, WARPS, LANES and `ssq`.
// A group of values with largest magnitude amax gets d = amax / 127 and codes round(x / d);
// with X2 the residual x - d * q (at most d / 2 per value) gets a second code on a grid 254
// times finer, so x = d * q + (d / 254) * q2 up to 1 / 254^2 of amax (see q_mv_stream_i8).

var<workgroup> nred: array<f32, select(1u, WG, NORM)>;

// The codes of 4 x values at 1 / scale s (127 / amax; 0 for an all-zero group), as floats
// (integers in -127..127), and the same packed as 4 int8: rounding and the residual stay in
// floats, with one pack4xI8 per word and no normalized pack / unpack round trip.
fn codes(v: vec4<f32>, s: f32) -> vec4<f32> { return clamp(round(v * s), vec4<f32>(-127.0), vec4<f32>(127.0)); }
fn pack(q: vec4<f32>) -> u32 { return pack4xI8(vec4<i32>(q)); }
fn amax4(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, e: vec4<f32>) -> f32 {
  let m = max(max(abs(a), abs(b)), max(abs(c), abs(e)));
  return max(max(m.x, m.y), max(m.z, m.w));
}

// 16 values quantized against a group amax `am` (the group may be larger than these 16):
// their codes (4 per word), with X2 the residual's codes, the scale of an integer dot with
// them (d, or d / 254 with X2: the dots combine as 254 * dot(c, q) + dot(c, q2)) and the sum
// of the 16 values as represented.
struct Q16 {
  q: vec4<u32>,
  q2: vec4<u32>,
  scale: f32,
  sum: f32,
};
fn quant16(v: array<vec4<f32>, 4>, am: f32) -> Q16 {
  let s = select(0.0, 127.0 / am, am > 0.0);
  let d = am / 127.0;
  let qa = codes(v[0], s);
  let qb = codes(v[1], s);
  let qc = codes(v[2], s);
  let qe = codes(v[3], s);
  var r: Q16;
  r.q = vec4<u32>(pack(qa), pack(qb), pack(qc), pack(qe));
  let qsum = dot(qa + qb + qc + qe, vec4<f32>(1.0));  // exact: integers of magnitude <= 2032
  if (X2) {
    let s2 = s * 254.0;
    let pa = codes(v[0] - qa * d, s2);
    let pb = codes(v[1] - qb * d, s2);
    let pc = codes(v[2] - qc * d, s2);
    let pe = codes(v[3] - qe * d, s2);
    r.q2 = vec4<u32>(pack(pa), pack(pb), pack(pc), pack(pe));
    r.scale = d / 254.0;
    r.sum = d * qsum + r.scale * dot(pa + pb + pc + pe, vec4<f32>(1.0));
  } else {
    r.scale = d;
    r.sum = d * qsum;
  }
  return r;
}

// NORM: the staging loads every x value once per workgroup, spread over all its invocations;
// afterwards lane l of every warp holds the ssq of the invocations l, l + 32, ... (what the
// common reduction expects: every warp's lanes together hold the whole row's sum).
fn respread_ssq(lid: u32, lane: u32) {
  if (NORM) {
    workgroupBarrier();
    nred[lid] = ssq;
    workgroupBarrier();
    var t = 0.0;
    for (var wp = 0u; wp < WARPS; wp = wp + 1u) { t = t + nred[wp * LANES + lane]; }
    ssq = t;
  }
}
