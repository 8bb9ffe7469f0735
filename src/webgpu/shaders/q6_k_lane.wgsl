// Q6_K part of the streaming matvec: SLOTS = 16 lanes per 256-element super-block. Part p
// takes half h = p / 8 and columns l0 .. l0 + 3 (l0 = 4 * (p % 8)): one u32 of each of
// ql[64h + l0 ..] (quarters 0 low / 2 high nibbles), ql[64h + 32 + l0 ..] (quarters 1 / 3)
// and qh[32h + l0 ..] (2 high bits of quarter t at bits 2t), i.e. elements 128h + 32t + l0
// .. + 3, which share sub-block 8h + 2t + l0 / Q_SUB. y = d * sc * (q - Q_ZERO), the zero
// point applied through the per-quarter sums of x. 210-byte blocks: u32_at realigns.
const SLOTS: u32 = 16u;

fn lane_dot(row_off: u32, x4: u32, b: u32, part: u32) -> f32 {
  let blk = row_off + b * Q_BLOCK_BYTES;
  let h = part / 8u;
  let l0 = 4u * (part % 8u);
  let qa = u32_at(blk + Q_OFF_QL + 64u * h + l0);
  let qb = u32_at(blk + Q_OFF_QL + 64u * h + 32u + l0);
  let qh = u32_at(blk + Q_OFF_QH + 32u * h + l0);
  let xi = x4 + (b * QK + 128u * h + l0) / 4u;  // quarter t at xi + 8t
  let x0 = x[xi];
  let x1 = x[xi + 8u];
  let x2 = x[xi + 16u];
  let x3 = x[xi + 24u];
  let s = vec4<f32>(dot(bytes_bits(qa, 0u, 0xFu) + 16.0 * bytes_bits(qh, 0u, 3u), x0),
                    dot(bytes_bits(qb, 0u, 0xFu) + 16.0 * bytes_bits(qh, 2u, 3u), x1),
                    dot(bytes_bits(qa, 4u, 0xFu) + 16.0 * bytes_bits(qh, 4u, 3u), x2),
                    dot(bytes_bits(qb, 4u, 0xFu) + 16.0 * bytes_bits(qh, 6u, 3u), x3));
  let one = vec4<f32>(1.0);
  let xs = vec4<f32>(dot(x0, one), dot(x1, one), dot(x2, one), dot(x3, one));
  let so = blk + Q_OFF_SCALES + 8u * h + l0 / Q_SUB;
  let sc = vec4<f32>(i8_at(so), i8_at(so + 2u), i8_at(so + 4u), i8_at(so + 6u));
  return half_at(blk + Q_OFF_D) * dot(sc, s - f32(Q_ZERO) * xs);
}
