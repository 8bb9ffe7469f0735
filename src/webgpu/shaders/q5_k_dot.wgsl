// Q5_K matvec work item: 64 elements of a super-block (sub-blocks 2c, 2c+1 sharing
// qs[32c ..] and bits 2c, 2c+1 of qh[0..31]); y = d*sc*q - dmin*mn per sub-block. The x
// values and their sums are loaded once and reused for the workgroup's weight rows.
const ITEMS_PER_BLOCK: u32 = 4u;

fn item_dot(row_base0: u32, x_base: u32, item: u32, nrows: u32) {
  let b = item / ITEMS_PER_BLOCK;
  let c = item % ITEMS_PER_BLOCK;
  let xo = x_base + b * QK + 2u * Q_SUB * c;
  var xa: array<vec4<f32>, 8>;  // sub-block 2c
  var xb: array<vec4<f32>, 8>;  // sub-block 2c + 1
  var x0 = 0.0;
  var x1 = 0.0;
  for (var l = 0u; l < 8u; l = l + 1u) {
    xa[l] = x4(xo + 4u * l);
    xb[l] = x4(xo + Q_SUB + 4u * l);
    x0 = x0 + dot(xa[l], vec4<f32>(1.0));
    x1 = x1 + dot(xb[l], vec4<f32>(1.0));
  }
  for (var r = 0u; r < nrows; r = r + 1u) {
    let off = row_base0 + r * params.row_bytes + b * Q_BLOCK_BYTES;  // 176-byte blocks: aligned
    let sm0 = scale_min_k(off + Q_OFF_SCALES, 2u * c);
    let sm1 = scale_min_k(off + Q_OFF_SCALES, 2u * c + 1u);
    let qw = (off + Q_OFF_QS + Q_SUB * c) >> 2u;
    let hw = (off + Q_OFF_QH) >> 2u;
    var s0 = 0.0;
    var s1 = 0.0;
    for (var l = 0u; l < 8u; l = l + 1u) {
      let word = w[qw + l];
      let hb = w[hw + l];
      s0 = s0 + dot(bytes_bits(word, 0u, 0xFu) + 16.0 * bytes_bits(hb, 2u * c, 1u), xa[l]);
      s1 = s1 + dot(bytes_bits(word, 4u, 0xFu) + 16.0 * bytes_bits(hb, 2u * c + 1u, 1u), xb[l]);
    }
    acc[r] = acc[r] + half_at(off + Q_OFF_D) * (sm0.x * s0 + sm1.x * s1)
                    - half_at(off + Q_OFF_DMIN) * (sm0.y * x0 + sm1.y * x1);
  }
}
