// Q4_K decoder: elements e..e+7 (e a multiple of 8) of sub-block j = (e % QK) / Q_SUB;
// y = d*sc[j]*q - dmin*mn[j]. Sub-blocks 2c and 2c+1 share qs[32c ..]: low / high nibbles.
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let r = e % QK;
  let j = r / Q_SUB;
  let sm = scale_min_k(off + Q_OFF_SCALES, j);
  let a = half_at(off + Q_OFF_D) * sm.x;
  let b = vec4<f32>(half_at(off + Q_OFF_DMIN) * sm.y);
  let qo = off + Q_OFF_QS + (j / 2u) * Q_SUB + r % Q_SUB;
  let sh = (j % 2u) * 4u;
  return pack8(a * bytes_bits(w[qo >> 2u], sh, 0xFu) - b, a * bytes_bits(w[(qo >> 2u) + 1u], sh, 0xFu) - b);
}
