// Q5_K decoder: as Q4_K plus a fifth bit, bit j of qh[l] for element l of sub-block j;
// q in [0, 31], y = d*sc[j]*q - dmin*mn[j].
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let r = e % QK;
  let j = r / Q_SUB;
  let l = r % Q_SUB;
  let sm = scale_min_k(off + Q_OFF_SCALES, j);
  let a = half_at(off + Q_OFF_D) * sm.x;
  let b = vec4<f32>(half_at(off + Q_OFF_DMIN) * sm.y);
  let qo = (off + Q_OFF_QS + (j / 2u) * Q_SUB + l) >> 2u;
  let ho = (off + Q_OFF_QH + l) >> 2u;
  let sh = (j % 2u) * 4u;
  let q0 = bytes_bits(w[qo], sh, 0xFu) + 16.0 * bytes_bits(w[ho], j, 1u);
  let q1 = bytes_bits(w[qo + 1u], sh, 0xFu) + 16.0 * bytes_bits(w[ho + 1u], j, 1u);
  return pack8(a * q0 - b, a * q1 - b);
}
