// decode8's view of the 32-element formats in Q4_0's nibble order (Q4_0, Q4_1, Q5_0, Q5_1):
// element j of a block is the low nibble of qs[j] for j < QK/2, the high nibble of
// qs[j - QK/2] otherwise. For elements e..e+7 (e a multiple of 8) of the row at row_base:
// the block's byte offset, e's index in the block, and the 8 nibbles as two vec4.
struct Nib8 {
  blk: u32,
  j: u32,
  lo: vec4<f32>,  // elements e..e+3
  hi: vec4<f32>,  // elements e+4..e+7
};

fn nib8(row_base: u32, e: u32) -> Nib8 {
  let blk = row_base + (e / QK) * Q_BLOCK_BYTES;
  let j = e % QK;
  let qo = blk + Q_OFF_QS + j % (QK / 2u);
  let sh = (j / (QK / 2u)) * 4u;
  return Nib8(blk, j, bytes_bits(u32_at(qo), sh, 0xFu), bytes_bits(u32_at(qo + 4u), sh, 0xFu));
}
