// Q5_1 part of the streaming matvec: SLOTS lanes per 32-element block, codes as Q5_0's
// (part p: code bytes 8p..8p+7 and their qh bits); y = d * q + m, the offset applied once per
// part through the sum of x: d * sum q*x + m * sum x. 24-byte blocks stay word-aligned, so
// plain word reads suffice.
#include "q_lane_nibbles"
const_assert Q_BLOCK_BYTES % 4u == 0u && Q_OFF_QS % 4u == 0u && Q_OFF_QH % 4u == 0u;
const_assert Q_OFF_D % 4u == 0u && Q_OFF_M == Q_OFF_D + 2u;  // d and m share one word

fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let qi = (blk + Q_OFF_QS + part * PART) >> 2u;
  let q0 = w[qi];
  let q1 = w[qi + 1u];
  let h = w[(blk + Q_OFF_QH) >> 2u];
  let dm = unpack2x16float(w[(blk + Q_OFF_D) >> 2u]);
  let j = part * PART;
  let s = dot(bytes_bits(q0, 0u, 0xFu) + 16.0 * bits4(h, j), v.lo0) +
          dot(bytes_bits(q1, 0u, 0xFu) + 16.0 * bits4(h, j + 4u), v.lo1) +
          dot(bytes_bits(q0, 4u, 0xFu) + 16.0 * bits4(h, j + QK / 2u), v.hi0) +
          dot(bytes_bits(q1, 4u, 0xFu) + 16.0 * bits4(h, j + QK / 2u + 4u), v.hi1);
  return dm.x * s + dm.y * v.sum;
}
