// Q8_0 matvec/matmul: one work item = one 32-element block (y = d * q, q int8).
#include "q_common"

const ITEMS_PER_BLOCK: u32 = 1u;

fn item_dot(row_base: u32, x_base: u32, b: u32) -> f32 {
  let off = row_base + b * Q_BLOCK_BYTES;  // blocks are 34 bytes: only 2-byte aligned
  let d = half_at(off + Q_OFF_D);
  let xo = x_base + b * QK;
  var s = 0.0;
  for (var j = 0u; j < QK; j = j + 1u) {
    let q = i32(byte_at(off + Q_OFF_QS + j) << 24u) >> 24u;  // sign-extend the int8
    s = s + f32(q) * x[xo + j];
  }
  return d * s;
}
