// Q4_K part of the streaming matvec: SLOTS = 16 lanes per 256-element super-block. Part p
// takes the 8 code bytes qs[32c + l0 ..] (c = p / 4, l0 = 8 * (p % 4)): low nibbles are
// elements 64c + l0 .. of sub-block 2c, high nibbles elements 64c + Q_SUB + l0 .. of
// sub-block 2c + 1. Per row the lane reads d/dmin (one word), the three scale words (one
// decode for both sub-blocks) and two code words:
// y = d * (sc0 * s0 + sc1 * s1) - dmin * (mn0 * sum x0 + mn1 * sum x1), the x sums computed
// once per step for all the lane's rows.
const SLOTS: u32 = 16u;
// 144-byte blocks stay word-aligned; d and dmin share a word.
const_assert Q_BLOCK_BYTES % 4u == 0u && Q_OFF_SCALES % 4u == 0u && Q_OFF_QS % 4u == 0u;
const_assert Q_OFF_D % 4u == 0u && Q_OFF_DMIN == Q_OFF_D + 2u;

struct LaneX {
  lo0: vec4<f32>,  // sub-block 2c
  lo1: vec4<f32>,
  hi0: vec4<f32>,  // sub-block 2c + 1
  hi1: vec4<f32>,
  sum_lo: f32,
  sum_hi: f32,
};

fn lane_x(x4: u32, b: u32, part: u32) -> LaneX {
  let c = part / 4u;
  let l0 = 8u * (part % 4u);
  let lo = x4 + (b * QK + 2u * Q_SUB * c + l0) / 4u;
  let hi = lo + Q_SUB / 4u;
  let a = xload(lo);
  let e = xload(lo + 1u);
  let f = xload(hi);
  let g = xload(hi + 1u);
  let one = vec4<f32>(1.0);
  return LaneX(a, e, f, g, dot(a + e, one), dot(f + g, one));
}

fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let c = part / 4u;
  let l0 = 8u * (part % 4u);
  let qi = (blk + Q_OFF_QS + 32u * c + l0) >> 2u;
  let q0 = w[qi];
  let q1 = w[qi + 1u];
  let si = (blk + Q_OFF_SCALES) >> 2u;
  let sm = scale_min_pair_k(w[si], w[si + 1u], w[si + 2u], c);
  let dm = unpack2x16float(w[(blk + Q_OFF_D) >> 2u]);
  let s0 = dot(bytes_bits(q0, 0u, 0xFu), v.lo0) + dot(bytes_bits(q1, 0u, 0xFu), v.lo1);
  let s1 = dot(bytes_bits(q0, 4u, 0xFu), v.hi0) + dot(bytes_bits(q1, 4u, 0xFu), v.hi1);
  return dm.x * (sm.x * s0 + sm.y * s1) - dm.y * (sm.z * v.sum_lo + sm.w * v.sum_hi);
}
