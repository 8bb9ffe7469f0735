// Q4_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8): one lane per 18-byte block. The
// 16 code bytes (c = blk + 2 ..) are read as the two 16-byte words from c's on (q_vec4: 2
// loads instead of 4-5 word loads), the 4 code words picked at c's word and realigned by 16
// bits where c is 2 modulo 4; d is one 16-bit load. Low nibbles are elements 0..15, high
// nibbles 16..31, i.e. x groups 2b and 2b + 1; the zero point 8 enters through the groups'
// code sums: d * (sum q*x - 8 * sum x), x as represented by its 8-bit terms (xdot, xsum).
#include "q_vec4"
const I8_PARTS: u32 = 1u;
fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let c = blk + 2u;
  let i = c >> 4u;
  let a0 = wv4(i);
  let a1 = wv4(i + 1u);
  let j = (c >> 2u) & 3u;
  var q = words_from(a0, a1, j);
  if ((c & 2u) != 0u) { q = shift16(q, word_of(a1, j)); }
  let d = unpack2x16float(half_bits(blk)).x;
  let lo = q & vec4<u32>(0x0F0F0F0Fu);
  let hi = (q >> vec4<u32>(4u)) & vec4<u32>(0x0F0F0F0Fu);
  let g = 2u * b;
  return d * (xdot(lo, g) + xdot(hi, g + 1u) - f32(Q_ZERO) * (xsum(g) + xsum(g + 1u)));
}
