// Q4_0 part of the streaming matvec: SLOTS lanes per 32-element block. Part p takes the 8
// code bytes 8p..8p+7: their low nibbles are elements 8p..8p+7, their high nibbles elements
// QK/2 + 8p..; the zero point is applied once per part through the sum of x, which lane_x
// computes once for all the lane's rows: d * (sum q*x - Q_ZERO * sum x).
#include "q_lane_nibbles"

// blk: byte offset of the block (18 bytes: every other one starts 2 bytes into a word).
fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let q = bytes8_at(blk + Q_OFF_QS + part * PART);
  let s = dot(bytes_bits(q.x, 0u, 0xFu), v.lo0) + dot(bytes_bits(q.y, 0u, 0xFu), v.lo1) +
          dot(bytes_bits(q.x, 4u, 0xFu), v.hi0) + dot(bytes_bits(q.y, 4u, 0xFu), v.hi1);
  return half_at(blk + Q_OFF_D) * (s - f32(Q_ZERO) * v.sum);
}
