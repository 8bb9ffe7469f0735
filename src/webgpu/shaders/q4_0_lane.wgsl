// Q4_0 part of the streaming matvec: SLOTS lanes per 32-element block. Part p takes the 8
// code bytes 8p..8p+7 (two u32 at an even offset): their low nibbles are elements 8p..8p+7,
// their high nibbles elements QK/2 + 8p..; the zero point is applied once per part through
// the sum of x: d * (sum q*x - Q_ZERO * sum x).
const SLOTS: u32 = 2u;
const PART: u32 = QK / 2u / SLOTS;  // code bytes per lane

fn lane_dot(row_off: u32, x4: u32, b: u32, part: u32) -> f32 {
  let blk = row_off + b * Q_BLOCK_BYTES;
  let qo = blk + Q_OFF_QS + part * PART;
  let lo = x4 + (b * QK + part * PART) / 4u;  // x of the low nibbles
  let hi = lo + QK / 2u / 4u;                 // x of the high nibbles
  let q0 = u32_at(qo);
  let q1 = u32_at(qo + 4u);
  let xa = x[lo];
  let xb = x[lo + 1u];
  let xc = x[hi];
  let xd = x[hi + 1u];
  let s = dot(bytes_bits(q0, 0u, 0xFu), xa) + dot(bytes_bits(q1, 0u, 0xFu), xb) +
          dot(bytes_bits(q0, 4u, 0xFu), xc) + dot(bytes_bits(q1, 4u, 0xFu), xd);
  let xs = dot(xa + xb + xc + xd, vec4<f32>(1.0));
  return half_at(blk + Q_OFF_D) * (s - f32(Q_ZERO) * xs);
}
