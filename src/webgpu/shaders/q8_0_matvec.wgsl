// Q8_0 matvec/matmul: one work item = one 32-element block (y = d * q, q int8).
#include "q_matvec_common"

const ITEMS_PER_BLOCK: u32 = 1u;

fn item_dot(row_base: u32, x_base: u32, b: u32) -> f32 {
  let off = row_base + b * Q_BLOCK_BYTES;
  let d = half_at(off + Q_OFF_D);
  let qs = q8_words(off);
  let xo = x_base + b * QK;
  var s = 0.0;
  for (var i = 0u; i < 8u; i = i + 1u) {
    let q = i8x4(qs[i]);
    let xv = vec4<f32>(x[xo + 4u * i], x[xo + 4u * i + 1u], x[xo + 4u * i + 2u], x[xo + 4u * i + 3u]);
    s = s + dot(q, xv);
  }
  return d * s;
}
