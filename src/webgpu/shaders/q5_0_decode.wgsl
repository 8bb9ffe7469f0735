// Q5_0 decoder: elements e..e+7 (e a multiple of 8); y = d * (q - Q_ZERO), q the nibble plus
// 16 times bit j of the block's qh word for element j. Blocks are 22 bytes: qh and qs start
// 2 bytes into a word in every other block (u32_at realigns).
#include "q_nibbles8"

fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let n = nib8(row_base, e);
  let d = half_at(n.blk + Q_OFF_D);
  let h = u32_at(n.blk + Q_OFF_QH);
  let z = vec4<f32>(f32(Q_ZERO));
  return pack8(d * (n.lo + 16.0 * bits4(h, n.j) - z), d * (n.hi + 16.0 * bits4(h, n.j + 4u) - z));
}
