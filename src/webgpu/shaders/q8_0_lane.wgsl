// Q8_0 part of the streaming matvec: SLOTS lanes per 32-element block, each taking 8
// consecutive int8 codes (two u32 at an even offset) and the block scale: d * sum(q * x).
const SLOTS: u32 = 4u;
const PART: u32 = QK / SLOTS;  // elements per lane

fn lane_dot(row_off: u32, x4: u32, b: u32, part: u32) -> f32 {
  let blk = row_off + b * Q_BLOCK_BYTES;
  let qo = blk + Q_OFF_QS + part * PART;
  let xi = x4 + (b * QK + part * PART) / 4u;
  let s = dot(i8x4(u32_at(qo)), x[xi]) + dot(i8x4(u32_at(qo + 4u)), x[xi + 1u]);
  return half_at(blk + Q_OFF_D) * s;
}
