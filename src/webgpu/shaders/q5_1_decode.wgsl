// Q5_1 decoder: elements e..e+7 (e a multiple of 8); y = d * q + m, the code q as Q5_0's
// (nibble in Q4_0's order, bit 4 = bit j of the qh word). 24-byte blocks stay word-aligned.
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let m = vec4<f32>(half_at(off + Q_OFF_M));
  let j = e % QK;
  let qo = off + Q_OFF_QS + j % (QK / 2u);
  let sh = (j / (QK / 2u)) * 4u;
  let h = u32_at(off + Q_OFF_QH);
  return pack8(d * (bytes_bits(u32_at(qo), sh, 0xFu) + 16.0 * bits4(h, j)) + m,
               d * (bytes_bits(u32_at(qo + 4u), sh, 0xFu) + 16.0 * bits4(h, j + 4u)) + m);
}
