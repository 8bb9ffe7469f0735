// Q8_0 matvec work item: one work item = one 32-element block (y = d * q, q int8), for each of
// the workgroup's weight rows.
const ITEMS_PER_BLOCK: u32 = 1u;

fn item_dot(row_base0: u32, x_base: u32, b: u32, nrows: u32) {
  let xo = x_base + b * QK;
  var xv: array<vec4<f32>, 8>;
  for (var i = 0u; i < 8u; i = i + 1u) {
    xv[i] = vec4<f32>(x[xo + 4u * i], x[xo + 4u * i + 1u], x[xo + 4u * i + 2u], x[xo + 4u * i + 3u]);
  }
  for (var r = 0u; r < nrows; r = r + 1u) {
    let off = row_base0 + r * params.row_bytes + b * Q_BLOCK_BYTES;
    let qs = q8_words(off);
    var s = 0.0;
    for (var i = 0u; i < 8u; i = i + 1u) {
      s = s + dot(i8x4(qs[i]), xv[i]);
    }
    acc[r] = acc[r] + half_at(off + Q_OFF_D) * s;
  }
}
