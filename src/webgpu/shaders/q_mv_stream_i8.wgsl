// Weight source of the streaming matvec (q_mv_stream_common) with 8-bit x and packed integer
// dot products (WGT_QMATVEC_KERNEL=i8; formats with a q*_i8 part: Q4_0, Q8_0). Why: on the
// H200 the float kernels are bound by per-element work (unpacking each code, converting it to
// f32, one FMA), not by DRAM; here four codes meet four x values in one dot4I8Packed and a
// block needs two int-to-float conversions instead of 32.
// x is quantized per chunk of KC elements into workgroup memory, once per workgroup (shared by
// its WARPS * ROWS rows): each group of 16 consecutive values gets its own scale
// d = max|x| / 127 and codes round(x / d) (packed by pack4xI8), plus d * (sum of its codes) for the
// formats with a zero point. The staging loads x through xload, so the NORM prologue works
// unchanged: the norm weight is applied before quantization, and because the staging spreads
// the values over the whole workgroup, each invocation's ssq is re-spread at the end so that
// every warp's lanes again hold the whole row's sum (what the common reduction expects).
// The lanes then take the chunk's (block, part) units in turn (unit u = lane, lane + 32, ...;
// with KSPLIT > 1 the KSPLIT warps of a row set take every KSPLIT-th trip of 32 units each;
// I8_PARTS parts per block, set by the format) for each of their ROWS rows and call the
// format's i8_dot(block byte offset, block index in the chunk, part); the x groups of
// chunk-local block b are xq[b * QK / 16 ..].
// Accuracy: with one term x is rounded to 8 bits per 16-value group (error <= 1/254 of the
// group's largest magnitude per value); docs/quantization.md gives the measured effect.
// X2 (WGT_QMATVEC_KERNEL=i8x2, the default): x is held as two 8-bit terms, d * (q1 + q2 / 254),
// q2 quantizing the residual of the first (|residual| <= d / 2, so |q2| <= 127) on a grid 254
// times finer, so the rounding error drops from 1/254 to 1/254^2 of the group's largest |x|
// (about f16 precision) for twice the integer dots and x reads. The fixed ratio lets the two
// dots of a group combine in the integer domain (254 * dot(c, q1) + dot(c, q2), at most
// 16 * 127 * 127 * 255 in magnitude) before one conversion and one scale, d / 254.
// Defines (besides the common ones): KC (x elements staged per chunk, a multiple of QK), X2.
// The weights' binding (1) is declared by the format's part: `w: array<u32>`, or (Q4_K) the
// 16-byte words `wv`.

const KC: u32 = {{KC}}u;
const_assert KC % QK == 0u && QK % 16u == 0u;
const KG: u32 = KC / 16u;
const X2: bool = {{X2}};
var<workgroup> xq: array<vec4<u32>, KG>;   // 16 int8 codes per group, 4 per word
var<workgroup> xq2: array<vec4<u32>, select(1u, KG, X2)>;  // X2: codes of the residual
// Per group: (scale of the group's integer dot: d, or d / 254 with X2; sum of the group's x as
// represented).
var<workgroup> xd: array<vec2<f32>, KG>;
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

// Quantizes group gi of the chunk starting at element k0 of x row m (x4: the row's vec4 index).
fn stage_group(x4: u32, k0: u32, gi: u32) {
  let e4 = x4 + (k0 + gi * 16u) / 4u;
  let a = xload(e4);
  let b = xload(e4 + 1u);
  let c = xload(e4 + 2u);
  let e = xload(e4 + 3u);
  let am = amax4(a, b, c, e);
  let s = select(0.0, 127.0 / am, am > 0.0);
  let d = am / 127.0;
  let qa = codes(a, s);
  let qb = codes(b, s);
  let qc = codes(c, s);
  let qe = codes(e, s);
  xq[gi] = vec4<u32>(pack(qa), pack(qb), pack(qc), pack(qe));
  let qsum = dot(qa + qb + qc + qe, vec4<f32>(1.0));  // exact: integers of magnitude <= 2032
  if (X2) {
    // The residual x - d * q (at most d / 2 per value) in steps of d / 254.
    let s2 = s * 254.0;
    let pa = codes(a - qa * d, s2);
    let pb = codes(b - qb * d, s2);
    let pc = codes(c - qc * d, s2);
    let pe = codes(e - qe * d, s2);
    xq2[gi] = vec4<u32>(pack(pa), pack(pb), pack(pc), pack(pe));
    let d2 = d / 254.0;
    xd[gi] = vec2<f32>(d2, d * qsum + d2 * dot(pa + pb + pc + pe, vec4<f32>(1.0)));
  } else {
    xd[gi] = vec2<f32>(d, d * qsum);
  }
}

// Sum of the 4 packed int8 products of each lane of a and b.
fn dot16(a: vec4<u32>, b: vec4<u32>) -> i32 {
  return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}
// For the formats' i8_dot: sum over x group g of code * x (c: the group's 16 codes, 4 per word,
// as int8), and the same over one half of the group only (c0, c1: its 8 codes; hi: the upper
// half, words 2 and 3).
fn xdot(c: vec4<u32>, g: u32) -> f32 {
  var t = dot16(c, xq[g]);
  if (X2) { t = t * 254 + dot16(c, xq2[g]); }
  return xd[g].x * f32(t);
}
fn xdot8(c0: u32, c1: u32, g: u32, hi: bool) -> f32 {
  let x = xq[g];
  let xh = select(x.xy, x.zw, hi);
  var t = dot4I8Packed(c0, xh.x) + dot4I8Packed(c1, xh.y);
  if (X2) {
    let r = xq2[g];
    let rh = select(r.xy, r.zw, hi);
    t = t * 254 + dot4I8Packed(c0, rh.x) + dot4I8Packed(c1, rh.y);
  }
  return xd[g].x * f32(t);
}
// Sum of x group g as represented (for the formats' zero points and mins).
fn xsum(g: u32) -> f32 { return xd[g].y; }

fn warp_partials(m: u32, n0: u32, cnt: u32, lane: u32, warp: u32) -> array<f32, ROWS> {
  var acc: array<f32, ROWS>;
  var ro: array<u32, ROWS>;
  let last = n0 + max(cnt, 1u) - 1u;
  for (var r = 0u; r < ROWS; r = r + 1u) { ro[r] = min(n0 + r, last) * p.row_bytes; }
  let x4 = m * (p.k / 4u);
  let lid = warp * LANES + lane;
  // Every invocation runs the same chunk loop (it depends on K only) and reaches each barrier.
  for (var k0 = 0u; k0 < p.k; k0 = k0 + KC) {
    let kn = min(KC, p.k - k0);
    workgroupBarrier();  // the previous chunk's codes are no longer read
    for (var gi = lid; gi < kn / 16u; gi = gi + WG) { stage_group(x4, k0, gi); }
    workgroupBarrier();
    if (cnt > 0u) {
      let b0 = k0 / QK;
      for (var u = lane + LANES * (warp % KSPLIT); u < kn / QK * I8_PARTS; u = u + LANES * KSPLIT) {
        let b = u / I8_PARTS;
        let bo = (b0 + b) * Q_BLOCK_BYTES;
        for (var r = 0u; r < ROWS; r = r + 1u) { acc[r] = acc[r] + i8_dot(ro[r] + bo, b, u % I8_PARTS); }
      }
    }
  }
  if (NORM) {  // lane l of every warp ends with the ssq of the invocations l, l + 32, ...
    workgroupBarrier();
    nred[lid] = ssq;
    workgroupBarrier();
    var t = 0.0;
    for (var wp = 0u; wp < WARPS; wp = wp + 1u) { t = t + nred[wp * LANES + lane]; }
    ssq = t;
  }
  return acc;
}
