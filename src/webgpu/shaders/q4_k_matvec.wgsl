// Q4_K matvec/matmul: one work item = 64 elements of a super-block (sub-blocks 2c and 2c+1
// sharing the 32 bytes qs[32c..32c+31]); y = d*sc*q - dmin*mn per 32-element sub-block.
#include "q_matvec_common"

const ITEMS_PER_BLOCK: u32 = 4u;

fn item_dot(row_base: u32, x_base: u32, item: u32) -> f32 {
  let b = item / ITEMS_PER_BLOCK;
  let c = item % ITEMS_PER_BLOCK;
  let off = row_base + b * Q_BLOCK_BYTES;  // 144-byte blocks and rows: 4-byte aligned
  let d = half_at(off + Q_OFF_D);
  let dmin = half_at(off + Q_OFF_DMIN);
  let sm0 = scale_min_k(off + Q_OFF_SCALES, 2u * c);
  let sm1 = scale_min_k(off + Q_OFF_SCALES, 2u * c + 1u);
  let qw = (off + Q_OFF_QS + 32u * c) >> 2u;
  let xo = x_base + b * QK + 64u * c;
  var s0 = 0.0;
  var s1 = 0.0;
  var x0 = 0.0;
  var x1 = 0.0;
  for (var l = 0u; l < 8u; l = l + 1u) {
    let word = w[qw + l];
    for (var k = 0u; k < 4u; k = k + 1u) {
      let bv = (word >> (8u * k)) & 0xFFu;
      let e = 4u * l + k;
      let xa = x[xo + e];
      let xb = x[xo + 32u + e];
      s0 = s0 + f32(bv & 0xFu) * xa;
      s1 = s1 + f32(bv >> 4u) * xb;
      x0 = x0 + xa;
      x1 = x1 + xb;
    }
  }
  return d * (sm0.x * s0 + sm1.x * s1) - dmin * (sm0.y * x0 + sm1.y * x1);
}
