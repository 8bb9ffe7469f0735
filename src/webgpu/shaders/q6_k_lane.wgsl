// Q6_K part of the streaming matvec: SLOTS = 16 lanes per 256-element super-block. Part p
// takes half h = p / 8 and columns l0 .. l0 + 3 (l0 = 4 * (p % 8)): one u32 of each of
// ql[64h + l0 ..] (quarters 0 low / 2 high nibbles), ql[64h + 32 + l0 ..] (quarters 1 / 3)
// and qh[32h + l0 ..] (2 high bits of quarter t at bits 2t), i.e. elements 128h + 32t + l0
// .. + 3, which share sub-block 8h + 2t + l0 / Q_SUB. y = d * sc * (q - Q_ZERO), the zero
// point applied through the per-quarter sums of x (computed once per step for all the lane's
// rows). 210-byte blocks start 2 bytes into a word every other block: branch-free reads.
const SLOTS: u32 = 16u;

struct LaneX {
  x0: vec4<f32>,  // quarter t = 0..3
  x1: vec4<f32>,
  x2: vec4<f32>,
  x3: vec4<f32>,
  sums: vec4<f32>,  // sum of each quarter's 4 values
};

fn lane_x(x4: u32, b: u32, part: u32) -> LaneX {
  let h = part / 8u;
  let l0 = 4u * (part % 8u);
  let xi = x4 + (b * QK + 128u * h + l0) / 4u;  // quarter t at xi + 8t
  let a = xload(xi);
  let c = xload(xi + 8u);
  let e = xload(xi + 16u);
  let f = xload(xi + 24u);
  let one = vec4<f32>(1.0);
  return LaneX(a, c, e, f, vec4<f32>(dot(a, one), dot(c, one), dot(e, one), dot(f, one)));
}

fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let h = part / 8u;
  let l0 = 4u * (part % 8u);
  let qa = bytes4_at(blk + Q_OFF_QL + 64u * h + l0);
  let qb = bytes4_at(blk + Q_OFF_QL + 64u * h + 32u + l0);
  let qh = bytes4_at(blk + Q_OFF_QH + 32u * h + l0);
  // The 6-bit codes of each quarter assembled in the integer domain (4 bytes per word op), so
  // that each value is converted to float once.
  let m4 = 0x0F0F0F0Fu;
  let m2 = 0x03030303u;
  let s = vec4<f32>(dot(bytes_bits((qa & m4) | ((qh & m2) << 4u), 0u, 0x3Fu), v.x0),
                    dot(bytes_bits((qb & m4) | (((qh >> 2u) & m2) << 4u), 0u, 0x3Fu), v.x1),
                    dot(bytes_bits(((qa >> 4u) & m4) | (((qh >> 4u) & m2) << 4u), 0u, 0x3Fu), v.x2),
                    dot(bytes_bits(((qb >> 4u) & m4) | (((qh >> 6u) & m2) << 4u), 0u, 0x3Fu), v.x3));
  let sc = q6k_scales4(blk + Q_OFF_SCALES + 8u * h, l0 / Q_SUB);
  return half_at(blk + Q_OFF_D) * dot(sc, s - f32(Q_ZERO) * v.sums);
}
