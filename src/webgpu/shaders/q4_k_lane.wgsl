// Q4_K part of the streaming matvec: SLOTS = 16 lanes per 256-element super-block. Part p
// takes the 8 code bytes qs[32c + l0 ..] (c = p / 4, l0 = 8 * (p % 4)): low nibbles are
// elements 64c + l0 .. of sub-block 2c, high nibbles elements 64c + Q_SUB + l0 .. of
// sub-block 2c + 1. The two 6-bit scale/min pairs are unpacked once per lane (not per
// value): y = d * (sc0 * s0 + sc1 * s1) - dmin * (mn0 * sum x0 + mn1 * sum x1).
const SLOTS: u32 = 16u;

fn lane_dot(row_off: u32, x4: u32, b: u32, part: u32) -> f32 {
  let blk = row_off + b * Q_BLOCK_BYTES;
  let c = part / 4u;
  let l0 = 8u * (part % 4u);
  let qo = blk + Q_OFF_QS + 32u * c + l0;
  let q0 = u32_at(qo);
  let q1 = u32_at(qo + 4u);
  let lo = x4 + (b * QK + 2u * Q_SUB * c + l0) / 4u;  // x of the low nibbles
  let hi = lo + Q_SUB / 4u;                           // x of the high nibbles
  let xa = x[lo];
  let xb = x[lo + 1u];
  let xc = x[hi];
  let xd = x[hi + 1u];
  let s0 = dot(bytes_bits(q0, 0u, 0xFu), xa) + dot(bytes_bits(q1, 0u, 0xFu), xb);
  let s1 = dot(bytes_bits(q0, 4u, 0xFu), xc) + dot(bytes_bits(q1, 4u, 0xFu), xd);
  let sm0 = scale_min_k(blk + Q_OFF_SCALES, 2u * c);
  let sm1 = scale_min_k(blk + Q_OFF_SCALES, 2u * c + 1u);
  let one = vec4<f32>(1.0);
  return half_at(blk + Q_OFF_D) * (sm0.x * s0 + sm1.x * s1) -
         half_at(blk + Q_OFF_DMIN) * (sm0.y * dot(xa + xb, one) + sm1.y * dot(xc + xd, one));
}
