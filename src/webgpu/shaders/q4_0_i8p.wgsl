// Q4_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8), two blocks per unit
// (I8_BLOCKS = 2; chosen where a row holds an even number of blocks): one lane per pair of
// 18-byte blocks, 9 whole words from a word boundary. The first block's d is the low half of
// word 0 and its 16 code bytes sit 2 bytes into words 0..4 (one funnel shift per word, known
// at compile time), the second's d is the high half of word 4 and its codes are words 5..8.
// Per block as in q4_0_i8: d * (sum q*x - 8 * sum x) over its x groups (low nibbles, then
// high nibbles).
// The weights as words (binding 1), read by the q_bytes helpers.
@group(0) @binding(1) var<storage, read> w: array<u32>;
const I8_PARTS: u32 = 1u;
const I8_BLOCKS: u32 = 2u;
const_assert Q_BLOCK_BYTES == 18u && Q_OFF_D == 0u && Q_OFF_QS == 2u && QK == 32u;

// One block's sum for its 16 code bytes c (4 per word) at x groups g (low nibbles), g + 1.
fn q4_block(c: vec4<u32>, g: u32) -> f32 {
  let m4 = vec4<u32>(0x0F0F0F0Fu);
  return xdot(c & m4, g) + xdot((c >> vec4<u32>(4u)) & m4, g + 1u) - f32(Q_ZERO) * (xsum(g) + xsum(g + 1u));
}

fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let i = blk >> 2u;
  let a = vec4<u32>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  let m = w[i + 4u];
  let e = vec4<u32>(w[i + 5u], w[i + 6u], w[i + 7u], w[i + 8u]);
  let c0 = (a >> vec4<u32>(16u)) | (vec4<u32>(a.yzw, m) << vec4<u32>(16u));
  let d0 = unpack2x16float(a.x).x;
  let d1 = unpack2x16float(m >> 16u).x;
  let g = 2u * b;
  return d0 * q4_block(c0, g) + d1 * q4_block(e, g + 2u);
}
