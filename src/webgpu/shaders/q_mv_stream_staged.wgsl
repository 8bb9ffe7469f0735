// Weight source of the streaming matvec (q_mv_stream_common) that stages the bytes through
// workgroup memory. Why: the direct source is bound by L1/LSU wavefronts, not by DRAM: each
// lane issues 3-5 scalar u32 loads per 8-16 weight bytes, and every warp-wide load instruction
// touches the same few hundred bytes again. Here, per loop trip, each warp copies the
// contiguous byte span its lanes will consume (TRIP blocks of each of its ROWS rows) with
// vec4<u32> loads (one 16-byte load per lane per 512 bytes of the warp's span), and the
// lanes then decode with the unchanged q_bytes helpers and lane_dot, which read `w` — here the
// staged copy in workgroup memory, at the same offsets modulo 16 as in global memory (so the
// 2-byte realignment of 18/34/210-byte blocks is the same).
// Pipelining: the next trip's vec4 loads are issued into registers before the current trip is
// decoded, and stored to the other of NBUF = 2 staging buffers afterwards, so one barrier per
// trip separates the stores from the reads (NBUF = 1: two barriers per trip, half the memory).
// Requirements (checked by the launcher, asserted here where possible): rows start 16-byte
// aligned (row_bytes % 16 == 0, weight binding at offset 0), TRIP * Q_BLOCK_BYTES % 16 == 0
// (so every trip's span, the tail trip's too, is whole vec4s), and the staging buffers fit the
// device's workgroup memory. Every invocation runs the same trip count (it depends on K only)
// and reaches every barrier; a warp without rows loads and decodes nothing.
// Defines (besides the common ones): NBUF (1 or 2). UNROLL is blocks per lane per trip as in
// the direct source; the launcher raises it where a trip would not be whole vec4s (Q6_K).
@group(0) @binding(1) var<storage, read> wv: array<vec4<u32>>;

const STRIDE: u32 = LANES / SLOTS;            // blocks one step of the warp covers
const TRIP: u32 = STRIDE * UNROLL;            // blocks per row and trip
const SPAN4: u32 = TRIP * Q_BLOCK_BYTES / 16u;  // vec4 per row and trip
const_assert (TRIP * Q_BLOCK_BYTES) % 16u == 0u;
const WARP4: u32 = ROWS * SPAN4;              // vec4 per warp and trip
const LOADS: u32 = (WARP4 + LANES - 1u) / LANES;  // vec4 loads per lane and trip
const NBUF: u32 = {{NBUF}}u;
const_assert NBUF == 1u || NBUF == 2u;
// Staging buffers as words, [buffer][warp][row][SPAN4 * 4]; named `w` so that the q_bytes
// helpers and the lane shaders read it unchanged.
var<workgroup> w: array<u32, NBUF * WARPS * WARP4 * 4u>;

// Issues this lane's vec4 loads of the trip starting at block t0 for the warp's rows (row r at
// vec4 index ro4[r]): flat index j = lane + LANES * i over the warp's ROWS * SPAN4 vec4s, so
// consecutive lanes read consecutive 16-byte words of one row. Skips rows past cnt and, in the
// tail trip, the vec4s past the row's end (span4 of them are valid).
fn fetch(ro4: ptr<function, array<u32, ROWS>>, cnt: u32, t0: u32, span4: u32, lane: u32) -> array<vec4<u32>, LOADS> {
  var v: array<vec4<u32>, LOADS>;
  let first = t0 * Q_BLOCK_BYTES / 16u;
  for (var i = 0u; i < LOADS; i = i + 1u) {
    let j = lane + LANES * i;
    let r = j / SPAN4;
    let c = j % SPAN4;
    if (r < cnt && c < span4) { v[i] = wv[(*ro4)[min(r, ROWS - 1u)] + first + c]; }
  }
  return v;
}

// Stores what fetch loaded into staging buffer buf of this warp.
fn put(v: ptr<function, array<vec4<u32>, LOADS>>, buf: u32, warp: u32, lane: u32) {
  let base = (buf * WARPS + warp) * WARP4;
  for (var i = 0u; i < LOADS; i = i + 1u) {
    let j = lane + LANES * i;
    if (j < WARP4) {
      let o = (base + j) * 4u;
      let q = (*v)[i];
      w[o] = q.x;
      w[o + 1u] = q.y;
      w[o + 2u] = q.z;
      w[o + 3u] = q.w;
    }
  }
}

// This lane's parts of the dot products of rows n0 .. n0 + cnt - 1 with x row m (zeros when
// cnt == 0). Rows past cnt decode stale staging words; their sums are never stored.
fn warp_partials(m: u32, n0: u32, cnt: u32, lane: u32, warp: u32) -> array<f32, ROWS> {
  let nb = params.k / QK;
  let row4 = params.row_bytes / 16u;
  var ro4: array<u32, ROWS>;
  for (var r = 0u; r < ROWS; r = r + 1u) { ro4[r] = (n0 + r) * row4; }
  let x4 = m * (params.k / 4u);
  let part = lane % SLOTS;
  let b0 = lane / SLOTS;
  var acc: array<f32, ROWS>;
  var v = fetch(&ro4, cnt, 0u, min(TRIP, nb) * Q_BLOCK_BYTES / 16u, lane);
  put(&v, 0u, warp, lane);
  workgroupBarrier();
  var buf = 0u;
  for (var t0 = 0u; t0 < nb; t0 = t0 + TRIP) {
    let t1 = t0 + TRIP;
    // Next trip's loads in flight while this one decodes (t1 and nb are uniform).
    if (t1 < nb) { v = fetch(&ro4, cnt, t1, min(TRIP, nb - t1) * Q_BLOCK_BYTES / 16u, lane); }
    if (cnt > 0u) {
      let wbase = (buf * WARPS + warp) * WARP4 * 16u;  // byte offset of row 0's span
      for (var u = 0u; u < UNROLL; u = u + 1u) {
        let bl = b0 + u * STRIDE;  // block within the trip
        if (t0 + bl < nb) {
          let xv = lane_x(x4, t0 + bl, part);
          for (var r = 0u; r < ROWS; r = r + 1u) {
            acc[r] = acc[r] + lane_dot(wbase + r * SPAN4 * 16u + bl * Q_BLOCK_BYTES, part, xv);
          }
        }
      }
    }
    // With one buffer, every warp must be done reading it before it is overwritten.
    if (NBUF == 1u) { workgroupBarrier(); }
    buf = (buf + 1u) % NBUF;
    if (t1 < nb) { put(&v, buf, warp, lane); }
    workgroupBarrier();
  }
  return acc;
}
