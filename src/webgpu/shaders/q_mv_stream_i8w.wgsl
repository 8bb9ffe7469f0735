// Weight source of the streaming matvec (q_mv_stream_common) with 8-bit x and coalesced weight
// loads: the i8 kernels for Q8_0 and Q4_0 where a row is whole 16-byte words (K a multiple of
// 256; WGT_QMATVEC_COALESCE=0 keeps q_mv_stream_i8). Why: in q_mv_stream_i8 each lane reads
// its own block, so one warp load instruction spans 32 blocks (576-1088 bytes, 5-9 cache
// lines for 128 useful bytes) and the L1 passes per byte, not DRAM, bound the kernel on the
// H200 (a lane per pair of blocks, twice the span, was 8-12% slower: BENCHMARKS.md run 12).
// Here lane l of a warp reads 16-byte word v = l, l + 32, ... of its rows' chunk, so a warp
// instruction reads 512 contiguous bytes.
// The words ignore block boundaries, so x is staged in the weights' byte layout ("byte
// space"): per chunk of KC elements, the x code that multiplies each weight byte, and 0 under
// the blocks' d bytes, so one dot4I8Packed of a weight word with the x word at the same index
// sums that word's products whatever the word holds. The 18- and 34-byte blocks put a block's
// d in the middle of some words, but never codes of two blocks in one word (d takes the 2
// bytes at every boundary): a 16-byte word holds parts of at most two blocks j0 and j0 + 1,
// and each 4-byte word belongs to the block of its first byte. Per 16-byte word the lane sums
// the integer dots of each block apart and scales them by the block's d (read from the
// weights: an L1 hit on the lines just loaded) and x's scales.
// The format part declares the byte-space x (workgroup arrays), struct XV and
// fn x_words(v) -> XV (the x words at 16-byte word v of the chunk),
// fn stage_pair(x4, k0, pi) (stages blocks 2 pi, 2 pi + 1 of the chunk from element k0 of the
// row at vec4 x4; each x value is loaded once per workgroup, as in q_mv_stream_i8) and
// fn vdot(q, xv, v, rb) -> f32 (the sum of 16-byte word v of the chunk whose first byte is rb).
// Defines (besides the common ones): KC (x elements per chunk, a multiple of 256), X2.

const KC: u32 = {{KC}}u;
const_assert KC % 256u == 0u && QK == 32u;
const X2: bool = {{X2}};
const NV: u32 = KC / QK * Q_BLOCK_BYTES / 16u;  // 16-byte words per row and chunk
@group(0) @binding(1) var<storage, read> wv: array<vec4<u32>>;
var<private> w: array<u32, 1>;  // the q_bytes helpers compile against it; never read here

#include "q_i8_x"

// The f16 d of block j of the row chunk starting at byte rb (at an even byte offset).
fn blk_d(rb: u32, j: u32) -> f32 {
  let o = rb + j * Q_BLOCK_BYTES;
  let word = wv[o >> 4u][(o >> 2u) & 3u];
  return unpack2x16float(select(word, word >> 16u, (o & 2u) != 0u)).x;
}
// Per 4-byte word c of the 16-byte word at chunk byte p0 in block j0 (j0 = p0 / block bytes):
// whether it belongs to block j0 + 1 (starting bnd bytes in; bnd >= 16: none does).
fn in_next(bnd: u32) -> vec4<bool> { return vec4<u32>(0u, 4u, 8u, 12u) >= vec4<u32>(bnd); }
// The four packed int8 dots of the words of q and x.
fn dots(q: vec4<u32>, x: vec4<u32>) -> vec4<i32> {
  return vec4<i32>(dot4I8Packed(q.x, x.x), dot4I8Packed(q.y, x.y), dot4I8Packed(q.z, x.z), dot4I8Packed(q.w, x.w));
}
// The same for both x terms (X2: 254 * first + second, combined in the integer domain).
fn dots2(q: vec4<u32>, x: vec4<u32>, x2: vec4<u32>) -> vec4<i32> {
  if (X2) { return dots(q, x) * 254 + dots(q, x2); }
  return dots(q, x);
}
// (sum over the words of block j0, sum over those of block j0 + 1).
fn split_sum(t: vec4<i32>, bnd: u32) -> vec2<f32> {
  let t1 = dot(select(vec4<i32>(0), t, in_next(bnd)), vec4<i32>(1));
  return vec2<f32>(f32(dot(t, vec4<i32>(1)) - t1), f32(t1));
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
    workgroupBarrier();  // the previous chunk's x is no longer read
    for (var pi = lid; pi < kn / 64u; pi = pi + WG) { stage_pair(x4, k0, pi); }
    workgroupBarrier();
    if (cnt > 0u) {
      let cb = k0 / QK * Q_BLOCK_BYTES;  // a multiple of 16: k0 is a multiple of 256
      for (var v = lane + LANES * (warp % KSPLIT); v < kn / QK * Q_BLOCK_BYTES / 16u; v = v + LANES * KSPLIT) {
        let xv = x_words(v);
        for (var r = 0u; r < ROWS; r = r + 1u) {
          let rb = ro[r] + cb;
          acc[r] = acc[r] + vdot(wv[(rb >> 4u) + v], xv, v, rb);
        }
      }
    }
  }
  respread_ssq(lid, lane);
  return acc;
}
