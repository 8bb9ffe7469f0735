// Q4_1 decoder: elements e..e+7 (e a multiple of 8); y = d * q + m, q the nibble.
#include "q_nibbles8"

fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let n = nib8(row_base, e);
  let d = half_at(n.blk + Q_OFF_D);
  let m = vec4<f32>(half_at(n.blk + Q_OFF_M));
  return pack8(d * n.lo + m, d * n.hi + m);
}
