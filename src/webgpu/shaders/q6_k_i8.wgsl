// Q6_K part of the 8-bit-x matvec (q_mv_stream_i8): I8_PARTS = 8 lanes per 256-element
// super-block. Part p takes half h = p / 4 and columns l0 .. l0 + 7 (l0 = 8 * (p % 4)): two
// words of each of ql[64h + l0 ..] (quarters 0 low / 2 high nibbles), ql[64h + 32 + l0 ..]
// (quarters 1 / 3) and qh[32h + l0 ..] (2 high bits of quarter t at bits 2t), i.e. elements
// 128h + 32t + l0 .. + 7: half of x group 8h + 2t + l0 / 16 (the upper half for odd p), one
// sub-block and scale per quarter. The codes are assembled in the integer domain as
// q - Q_ZERO (6-bit two's complement, sign-extended to 8 bits), so no zero-point term remains:
// y = d * sum_t sc_t * sum (q - 32) x. 210-byte blocks start 2 bytes into a word every
// other block: branch-free reads (q_bytes).
// The weights as words (binding 1), read by the q_bytes helpers.
@group(0) @binding(1) var<storage, read> w: array<u32>;
const I8_PARTS: u32 = 8u;
const_assert Q_ZERO == 32u && Q_SUB == 16u && QK == 256u;

// Four 6-bit codes (low nibbles lo, 2-bit high parts hi at bit 0 of each byte) as int8 q - 32.
fn q6_signed(lo: u32, hi: u32) -> u32 {
  let s = ((lo & 0x0F0F0F0Fu) | ((hi & 0x03030303u) << 4u)) ^ 0x20202020u;
  return s | ((s & 0x20202020u) * 6u);
}

fn i8_dot(blk: u32, b: u32, p: u32) -> f32 {
  let h = p / 4u;
  let l0 = 8u * (p % 4u);
  let qa = bytes8_at(blk + Q_OFF_QL + 64u * h + l0);
  let qb = bytes8_at(blk + Q_OFF_QL + 64u * h + 32u + l0);
  let qh = bytes8_at(blk + Q_OFF_QH + 32u * h + l0);
  let sc = q6k_scales4(blk + Q_OFF_SCALES + 8u * h, l0 / Q_SUB);
  let g = 16u * b + 8u * h + l0 / 16u;  // x group of quarter 0; quarter t: g + 2t
  let hi = (p % 2u) != 0u;              // the part's 8 values are the upper half of its groups
  var s = vec4<f32>();
  for (var t = 0u; t < 4u; t = t + 1u) {
    let lo = select(qa, qb, (t & 1u) != 0u) >> vec2<u32>(4u * (t / 2u));
    let qh_t = qh >> vec2<u32>(2u * t);
    s[t] = xdot8(q6_signed(lo.x, qh_t.x), q6_signed(lo.y, qh_t.y), g + 2u * t, hi);
  }
  return half_at(blk + Q_OFF_D) * dot(sc, s);
}
