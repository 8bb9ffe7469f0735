// Q4_1 matvec work item: one 32-element block, y = d * q + m: d * sum q*x + m * sum x.
const ITEMS_PER_BLOCK: u32 = 1u;

fn item_dot(row_base0: u32, x_base: u32, b: u32, nrows: u32) {
  let xo = x_base + b * QK;
  var xa: array<vec4<f32>, 4>;  // elements 0..15 (low nibbles)
  var xb: array<vec4<f32>, 4>;  // elements 16..31 (high nibbles)
  var xs = 0.0;
  for (var i = 0u; i < 4u; i = i + 1u) {
    xa[i] = x4(xo + 4u * i);
    xb[i] = x4(xo + QK / 2u + 4u * i);
    xs = xs + dot(xa[i] + xb[i], vec4<f32>(1.0));
  }
  for (var r = 0u; r < nrows; r = r + 1u) {
    let off = row_base0 + r * params.row_bytes + b * Q_BLOCK_BYTES;  // 20-byte blocks: aligned
    let q = words4(off + Q_OFF_QS);
    var s = 0.0;
    for (var i = 0u; i < 4u; i = i + 1u) {
      s = s + dot(bytes_bits(q[i], 0u, 0xFu), xa[i]) + dot(bytes_bits(q[i], 4u, 0xFu), xb[i]);
    }
    acc[r] = acc[r] + half_at(off + Q_OFF_D) * s + half_at(off + Q_OFF_M) * xs;
  }
}
