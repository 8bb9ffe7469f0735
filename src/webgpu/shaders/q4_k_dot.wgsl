// Q4_K matvec work item: one work item = 64 elements of a super-block (sub-blocks 2c and 2c+1
// sharing the 32 bytes qs[32c..32c+31]); y = d*sc*q - dmin*mn per 32-element sub-block.
// The x values and their sums are loaded once and reused for the workgroup's weight rows.
const ITEMS_PER_BLOCK: u32 = 4u;

fn item_dot(row_base0: u32, x_base: u32, item: u32, nrows: u32) {
  let b = item / ITEMS_PER_BLOCK;
  let c = item % ITEMS_PER_BLOCK;
  let xo = x_base + b * QK + 64u * c;
  var xa: array<vec4<f32>, 8>;  // elements 64c + 0..31 (low nibbles)
  var xb: array<vec4<f32>, 8>;  // elements 64c + 32..63 (high nibbles)
  var x0 = 0.0;
  var x1 = 0.0;
  for (var l = 0u; l < 8u; l = l + 1u) {
    xa[l] = vec4<f32>(x[xo + 4u * l], x[xo + 4u * l + 1u], x[xo + 4u * l + 2u], x[xo + 4u * l + 3u]);
    xb[l] = vec4<f32>(x[xo + 32u + 4u * l], x[xo + 33u + 4u * l], x[xo + 34u + 4u * l], x[xo + 35u + 4u * l]);
    x0 = x0 + dot(xa[l], vec4<f32>(1.0));
    x1 = x1 + dot(xb[l], vec4<f32>(1.0));
  }
  for (var r = 0u; r < nrows; r = r + 1u) {
    let off = row_base0 + r * params.row_bytes + b * Q_BLOCK_BYTES;  // 144-byte blocks: 4-byte aligned
    let sm0 = scale_min_k(off + Q_OFF_SCALES, 2u * c);
    let sm1 = scale_min_k(off + Q_OFF_SCALES, 2u * c + 1u);
    let qw = (off + Q_OFF_QS + 32u * c) >> 2u;
    var s0 = 0.0;
    var s1 = 0.0;
    for (var l = 0u; l < 8u; l = l + 1u) {
      let word = w[qw + l];
      let lo = vec4<f32>(vec4<u32>(word, word >> 8u, word >> 16u, word >> 24u) & vec4<u32>(0xFu));
      let hi = vec4<f32>(vec4<u32>(word >> 4u, word >> 12u, word >> 20u, word >> 28u) & vec4<u32>(0xFu));
      s0 = s0 + dot(lo, xa[l]);
      s1 = s1 + dot(hi, xb[l]);
    }
    acc[r] = acc[r] + half_at(off + Q_OFF_D) * (sm0.x * s0 + sm1.x * s1)
                    - half_at(off + Q_OFF_DMIN) * (sm0.y * x0 + sm1.y * x1);
  }
}
