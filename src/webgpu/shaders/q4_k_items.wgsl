// Q4_K values of one work item (64 elements of a super-block, y = d*sc*q - dmin*mn) written
// to y, shared by q4_k_dequant and q4_k_get_rows.
const ITEMS_PER_BLOCK: u32 = 4u;

fn item_store(row_base: u32, out_base: u32, item: u32) {
  let b = item / ITEMS_PER_BLOCK;
  let c = item % ITEMS_PER_BLOCK;
  let off = row_base + b * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let dmin = half_at(off + Q_OFF_DMIN);
  let sm0 = scale_min_k(off + Q_OFF_SCALES, 2u * c);
  let sm1 = scale_min_k(off + Q_OFF_SCALES, 2u * c + 1u);
  let d0 = d * sm0.x;
  let m0 = dmin * sm0.y;
  let d1 = d * sm1.x;
  let m1 = dmin * sm1.y;
  let qw = (off + Q_OFF_QS + 32u * c) >> 2u;
  let o = out_base + b * QK + 64u * c;
  for (var l = 0u; l < 8u; l = l + 1u) {
    let word = w[qw + l];
    for (var k = 0u; k < 4u; k = k + 1u) {
      let bv = (word >> (8u * k)) & 0xFFu;
      y[o + 4u * l + k] = d0 * f32(bv & 0xFu) - m0;
      y[o + 32u + 4u * l + k] = d1 * f32(bv >> 4u) - m1;
    }
  }
}
