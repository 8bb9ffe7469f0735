// Q5_0 decoder: elements e..e+7 (e a multiple of 8); y = d * (q - Q_ZERO). The low 4 bits of
// element j's code are Q4_0's nibble (low nibble of qs[j] for j < QK/2, high nibble of
// qs[j - QK/2] otherwise), bit 4 is bit j of the block's qh word. Blocks are 22 bytes: qh and
// qs start 2 bytes into a word in every other block (u32_at realigns).
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let j = e % QK;
  let qo = off + Q_OFF_QS + j % (QK / 2u);
  let sh = (j / (QK / 2u)) * 4u;
  let h = u32_at(off + Q_OFF_QH);
  let z = vec4<f32>(f32(Q_ZERO));
  return pack8(d * (bytes_bits(u32_at(qo), sh, 0xFu) + 16.0 * bits4(h, j) - z),
               d * (bytes_bits(u32_at(qo + 4u), sh, 0xFu) + 16.0 * bits4(h, j + 4u) - z));
}
