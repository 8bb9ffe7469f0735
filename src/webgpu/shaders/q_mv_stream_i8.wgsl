// Weight source of the streaming matvec (q_mv_stream_common) with 8-bit x and packed integer
// dot products (WGT_QMATVEC_KERNEL=i8; formats with a q*_i8 part: Q4_0, Q8_0). Why: on the
// H200 the float kernels are bound by per-element work (unpacking each code, converting it to
// f32, one FMA), not by DRAM; here four codes meet four x values in one dot4I8Packed and a
// block needs two int-to-float conversions instead of 32.
// x is quantized per chunk of KC elements into workgroup memory, once per workgroup (shared by
// its WARPS * ROWS rows): each group of 16 consecutive values gets its own scale
// d = max|x| / 127 and codes round(x / d) (pack4x8snorm), plus d * (sum of its codes) for the
// formats with a zero point. The staging loads x through xload, so the NORM prologue works
// unchanged: the norm weight is applied before quantization, and because the staging spreads
// the values over the whole workgroup, each invocation's ssq is re-spread at the end so that
// every warp's lanes again hold the whole row's sum (what the common reduction expects).
// The lanes then take the chunk's (block, part) units in turn (unit u = lane, lane + 32, ...;
// I8_PARTS parts per block, set by the format) for each of their ROWS rows and call the
// format's i8_dot(block byte offset, block index in the chunk, part); the x groups of
// chunk-local block b are xq[b * QK / 16 ..].
// Accuracy: x is rounded to 8 bits per 16-value group (relative error <= 1/254 of the group's
// largest magnitude per value); docs/quantization.md gives the measured effect.
// Defines (besides the common ones): KC (x elements staged per chunk, a multiple of QK).

// Sum of the 4 packed int8 products of each lane of a and b.
fn dot16(a: vec4<u32>, b: vec4<u32>) -> i32 {
  return dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y) + dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w);
}
@group(0) @binding(1) var<storage, read> w: array<u32>;

const KC: u32 = {{KC}}u;
const_assert KC % QK == 0u && QK % 16u == 0u;
const KG: u32 = KC / 16u;
var<workgroup> xq: array<vec4<u32>, KG>;  // 16 int8 codes per group, 4 per word
var<workgroup> xd: array<vec2<f32>, KG>;  // (scale, scale * sum of the group's codes)
var<workgroup> nred: array<f32, select(1u, WG, NORM)>;

// Quantizes group gi of the chunk starting at element k0 of x row m (x4: the row's vec4 index).
fn stage_group(x4: u32, k0: u32, gi: u32) {
  let e4 = x4 + (k0 + gi * 16u) / 4u;
  let a = xload(e4);
  let b = xload(e4 + 1u);
  let c = xload(e4 + 2u);
  let e = xload(e4 + 3u);
  let mx = max(max(abs(a), abs(b)), max(abs(c), abs(e)));
  let amax = max(max(mx.x, mx.y), max(mx.z, mx.w));
  let inv = select(0.0, 1.0 / amax, amax > 0.0);
  let q = vec4<u32>(pack4x8snorm(a * inv), pack4x8snorm(b * inv), pack4x8snorm(c * inv), pack4x8snorm(e * inv));
  let ones = 0x01010101u;
  let s = dot4I8Packed(q.x, ones) + dot4I8Packed(q.y, ones) + dot4I8Packed(q.z, ones) + dot4I8Packed(q.w, ones);
  let d = amax / 127.0;
  xq[gi] = q;
  xd[gi] = vec2<f32>(d, d * f32(s));
}

fn warp_partials(m: u32, n0: u32, cnt: u32, lane: u32, warp: u32) -> array<f32, ROWS> {
  var acc: array<f32, ROWS>;
  var ro: array<u32, ROWS>;
  let last = n0 + max(cnt, 1u) - 1u;
  for (var r = 0u; r < ROWS; r = r + 1u) { ro[r] = min(n0 + r, last) * params.row_bytes; }
  let x4 = m * (params.k / 4u);
  let lid = warp * LANES + lane;
  // Every invocation runs the same chunk loop (it depends on K only) and reaches each barrier.
  for (var k0 = 0u; k0 < params.k; k0 = k0 + KC) {
    let kn = min(KC, params.k - k0);
    workgroupBarrier();  // the previous chunk's codes are no longer read
    for (var gi = lid; gi < kn / 16u; gi = gi + WG) { stage_group(x4, k0, gi); }
    workgroupBarrier();
    if (cnt > 0u) {
      let b0 = k0 / QK;
      for (var u = lane; u < kn / QK * I8_PARTS; u = u + LANES) {
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
