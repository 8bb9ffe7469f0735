// Q5_0 part of the streaming matvec: SLOTS lanes per 32-element block, laid out as Q4_0's
// (part p: code bytes 8p..8p+7, low nibbles elements 8p.., high nibbles QK/2 + 8p..), each
// code completed by its bit of the qh word (bit j for element j); the zero point is applied
// once per part through the sum of x: d * (sum q*x - Q_ZERO * sum x).
#include "q_lane_nibbles"

// blk: byte offset of the block (22 bytes: every other one starts 2 bytes into a word).
fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let q = bytes8_at(blk + Q_OFF_QS + part * PART);
  let h = bytes4_at(blk + Q_OFF_QH);
  let j = part * PART;  // element of the first low nibble
  let s = dot(bytes_bits(q.x, 0u, 0xFu) + 16.0 * bits4(h, j), v.lo0) +
          dot(bytes_bits(q.y, 0u, 0xFu) + 16.0 * bits4(h, j + 4u), v.lo1) +
          dot(bytes_bits(q.x, 4u, 0xFu) + 16.0 * bits4(h, j + QK / 2u), v.hi0) +
          dot(bytes_bits(q.y, 4u, 0xFu) + 16.0 * bits4(h, j + QK / 2u + 4u), v.hi1);
  return half_at(blk + Q_OFF_D) * (s - f32(Q_ZERO) * v.sum);
}
