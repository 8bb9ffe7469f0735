// Q6_K matvec work item: half h = item/2 of a super-block, 16-column slice g = item%2:
// elements 128h + 32t + 16g + i (quarter t < 4, i < 16), i.e. 16 bytes of each of
// ql[64h + 16g ..], ql[64h + 32 + 16g ..] and qh[32h + 16g ..], and the 4 sub-block scales
// 8h + 2t + g. y = d * sc * (q - Q_ZERO), the zero point applied through the sums of x.
// Blocks are 210 bytes: words4 realigns the fields of odd blocks.
const ITEMS_PER_BLOCK: u32 = 4u;

fn item_dot(row_base0: u32, x_base: u32, item: u32, nrows: u32) {
  let b = item / ITEMS_PER_BLOCK;
  let h = (item % ITEMS_PER_BLOCK) / 2u;
  let g = item % 2u;
  let xo = x_base + b * QK + 128u * h + Q_SUB * g;
  var xv: array<vec4<f32>, 16>;  // [t * 4 + i]: quarter t, elements 4i..4i+3 of the slice
  var xs = vec4<f32>(0.0);       // sum of x per quarter
  for (var t = 0u; t < 4u; t = t + 1u) {
    for (var i = 0u; i < 4u; i = i + 1u) {
      xv[t * 4u + i] = x4(xo + 32u * t + 4u * i);
      xs[t] = xs[t] + dot(xv[t * 4u + i], vec4<f32>(1.0));
    }
  }
  for (var r = 0u; r < nrows; r = r + 1u) {
    let off = row_base0 + r * params.row_bytes + b * Q_BLOCK_BYTES;
    let qa = words4(off + Q_OFF_QL + 64u * h + Q_SUB * g);        // quarters 0 (low), 2 (high)
    let qb = words4(off + Q_OFF_QL + 64u * h + 32u + Q_SUB * g);  // quarters 1 (low), 3 (high)
    let qh = words4(off + Q_OFF_QH + 32u * h + Q_SUB * g);
    var s = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i = i + 1u) {
      s.x = s.x + dot(bytes_bits(qa[i], 0u, 0xFu) + 16.0 * bytes_bits(qh[i], 0u, 3u), xv[i]);
      s.y = s.y + dot(bytes_bits(qb[i], 0u, 0xFu) + 16.0 * bytes_bits(qh[i], 2u, 3u), xv[4u + i]);
      s.z = s.z + dot(bytes_bits(qa[i], 4u, 0xFu) + 16.0 * bytes_bits(qh[i], 4u, 3u), xv[8u + i]);
      s.w = s.w + dot(bytes_bits(qb[i], 4u, 0xFu) + 16.0 * bytes_bits(qh[i], 6u, 3u), xv[12u + i]);
    }
    let so = off + Q_OFF_SCALES + 8u * h + g;
    let sc = vec4<f32>(i8_at(so), i8_at(so + 2u), i8_at(so + 4u), i8_at(so + 6u));
    acc[r] = acc[r] + half_at(off + Q_OFF_D) * dot(sc, s - f32(Q_ZERO) * xs);
  }
}
