// Q6_K decoder: elements e..e+7 (e a multiple of 8). Element 128h + 32t + l (quarter t, l < 32)
// takes its low 4 bits from ql[64h + 32(t%2) + l] (low nibble for t < 2, else high) and its
// high 2 bits from bits 2t of qh[32h + l]; y = d * scales[r / Q_SUB] * (q - Q_ZERO).
// Blocks are 210 bytes, so fields may start 2 bytes into a word (u32_at realigns).
fn decode8(row_base: u32, e: u32) -> array<f32, 8> {
  let off = row_base + (e / QK) * Q_BLOCK_BYTES;
  let r = e % QK;
  let h = r / 128u;
  let t = (r % 128u) / 32u;
  let l = r % 32u;
  let lo = off + Q_OFF_QL + 64u * h + 32u * (t % 2u) + l;
  let hi = off + Q_OFF_QH + 32u * h + l;
  let s = half_at(off + Q_OFF_D) * i8_at(off + Q_OFF_SCALES + r / Q_SUB);
  let z = vec4<f32>(f32(Q_ZERO));
  let q0 = bytes_bits(u32_at(lo), 4u * (t / 2u), 0xFu) + 16.0 * bytes_bits(u32_at(hi), 2u * t, 3u);
  let q1 = bytes_bits(u32_at(lo + 4u), 4u * (t / 2u), 0xFu) + 16.0 * bytes_bits(u32_at(hi + 4u), 2u * t, 3u);
  return pack8(s * (q0 - z), s * (q1 - z));
}
