// Q4_1 part of the streaming matvec: SLOTS lanes per 32-element block, nibble order as Q4_0
// (part p: code bytes 8p..8p+7, low nibbles elements 8p.., high nibbles QK/2 + 8p..);
// y = d * q + m, the offset applied once per part through the sum of x: d * sum q*x + m * sum x.
// 20-byte blocks stay word-aligned, so plain word reads suffice.
#include "q_lane_nibbles"
const_assert Q_BLOCK_BYTES % 4u == 0u && Q_OFF_QS % 4u == 0u;
const_assert Q_OFF_D % 4u == 0u && Q_OFF_M == Q_OFF_D + 2u;  // d and m share one word

fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let qi = (blk + Q_OFF_QS + part * PART) >> 2u;
  let q0 = w[qi];
  let q1 = w[qi + 1u];
  let dm = unpack2x16float(w[(blk + Q_OFF_D) >> 2u]);
  let s = dot(bytes_bits(q0, 0u, 0xFu), v.lo0) + dot(bytes_bits(q1, 0u, 0xFu), v.lo1) +
          dot(bytes_bits(q0, 4u, 0xFu), v.hi0) + dot(bytes_bits(q1, 4u, 0xFu), v.hi1);
  return dm.x * s + dm.y * v.sum;
}
