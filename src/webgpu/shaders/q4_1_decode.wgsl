// Q4_1 decoder: elements e..e+7 (e a multiple of 8); y = d * q + m, nibble order as Q4_0.
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let m = vec4<f32>(half_at(off + Q_OFF_M));
  let j = e % QK;
  let qo = off + Q_OFF_QS + j % (QK / 2u);
  let sh = (j / (QK / 2u)) * 4u;
  return pack8(d * bytes_bits(u32_at(qo), sh, 0xFu) + m, d * bytes_bits(u32_at(qo + 4u), sh, 0xFu) + m);
}
