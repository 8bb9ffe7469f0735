// Q8_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8), two blocks per unit
// (I8_BLOCKS = 2; chosen where a row holds an even number of blocks): one lane per pair of
// 34-byte blocks. A pair is 17 whole words from a word boundary (pairs start every 68 bytes
// and rows of an even block count start on a word), so where each field sits is known at
// compile time: the first block's d is the low half of word 0 and its 32 codes sit 2 bytes
// into words 0..8 (one funnel shift per word), the second's d is the high half of word 8 and
// its codes are words 9..16 as they are. The unpaired part (q8_0_i8) learns the 2-byte offset
// of every other block at run time and realigns with selects.
// The weights as words (binding 1), read by the q_bytes helpers.
@group(0) @binding(1) var<storage, read> w: array<u32>;
const I8_PARTS: u32 = 1u;
const I8_BLOCKS: u32 = 2u;
const_assert Q_BLOCK_BYTES == 34u && Q_OFF_D == 0u && Q_OFF_QS == 2u && QK == 32u;

fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let i = blk >> 2u;
  let a0 = vec4<u32>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  let a1 = vec4<u32>(w[i + 4u], w[i + 5u], w[i + 6u], w[i + 7u]);
  let m = w[i + 8u];
  let e0 = vec4<u32>(w[i + 9u], w[i + 10u], w[i + 11u], w[i + 12u]);
  let e1 = vec4<u32>(w[i + 13u], w[i + 14u], w[i + 15u], w[i + 16u]);
  let sh = vec4<u32>(16u);
  let c0 = (a0 >> sh) | (vec4<u32>(a0.yzw, a1.x) << sh);
  let c1 = (a1 >> sh) | (vec4<u32>(a1.yzw, m) << sh);
  let d0 = unpack2x16float(a0.x).x;
  let d1 = unpack2x16float(m >> 16u).x;
  let g = 2u * b;
  return d0 * (xdot(c0, g) + xdot(c1, g + 1u)) + d1 * (xdot(e0, g + 2u) + xdot(e1, g + 3u));
}
