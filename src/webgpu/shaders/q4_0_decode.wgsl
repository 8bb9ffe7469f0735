// Q4_0 decoder: elements e..e+7 (e a multiple of 8); y = d * (q - Q_ZERO), q the nibble.
#include "q_nibbles8"

fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let n = nib8(row_base, e);
  let d = half_at(n.blk + Q_OFF_D);
  let z = vec4<f32>(f32(Q_ZERO));
  return pack8(d * (n.lo - z), d * (n.hi - z));
}
