// Q8_0 decoder: elements e..e+7 (e a multiple of 8) of the row at byte row_base; y = d * q.
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let qo = off + Q_OFF_QS + e % QK;
  return pack8(d * i8x4(u32_at(qo)), d * i8x4(u32_at(qo + 4u)));
}
