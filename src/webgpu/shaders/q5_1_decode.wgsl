// Q5_1 decoder: elements e..e+7 (e a multiple of 8); y = d * q + m, the code q as Q5_0's.
// 24-byte blocks stay word-aligned.
#include "q_nibbles8"

fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let n = nib8(row_base, e);
  let d = half_at(n.blk + Q_OFF_D);
  let m = vec4<f32>(half_at(n.blk + Q_OFF_M));
  let h = u32_at(n.blk + Q_OFF_QH);
  return pack8(d * (n.lo + 16.0 * bits4(h, n.j)) + m, d * (n.hi + 16.0 * bits4(h, n.j + 4u)) + m);
}
