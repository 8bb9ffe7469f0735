// Q8_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8): one lane per 34-byte block. The
// 32 int8 codes (bytes c = blk + 2 ..) are read as the three 16-byte words from c's on
// (q_vec4: 3 loads instead of 8-9 word loads; 34-byte blocks start at every even offset modulo
// 16), the 8 code words picked from them at c's word and realigned by 16 bits where c is 2
// modulo 4; d is one 16-bit load: d * sum q*x over x groups 2b, 2b + 1.
#include "q_vec4"
const I8_PARTS: u32 = 1u;
fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let c = blk + 2u;
  let i = c >> 4u;
  let a0 = wv4(i);
  let a1 = wv4(i + 1u);
  let a2 = wv4(i + 2u);
  let j = (c >> 2u) & 3u;
  var c0 = words_from(a0, a1, j);
  var c1 = words_from(a1, a2, j);
  if ((c & 2u) != 0u) {
    c0 = shift16(c0, c1.x);
    c1 = shift16(c1, word_of(a2, j));
  }
  let d = unpack2x16float(half_bits(blk)).x;
  return d * (xdot(c0, 2u * b) + xdot(c1, 2u * b + 1u));
}
