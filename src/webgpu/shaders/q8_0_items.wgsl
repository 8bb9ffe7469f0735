// Q8_0 values of one work item (a 32-element block, y = d * q) written to y, shared by
// q8_0_dequant and q8_0_get_rows.
const ITEMS_PER_BLOCK: u32 = 1u;

fn item_store(row_base: u32, out_base: u32, b: u32) {
  let off = row_base + b * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let qs = q8_words(off);
  let o = out_base + b * QK;
  for (var i = 0u; i < 8u; i = i + 1u) {
    let q = i8x4(qs[i]);
    y[o + 4u * i] = d * q.x;
    y[o + 4u * i + 1u] = d * q.y;
    y[o + 4u * i + 2u] = d * q.z;
    y[o + 4u * i + 3u] = d * q.w;
  }
}
