// Q4_K part of the 8-bit-x matvec (q_mv_stream_i8): I8_PARTS = 4 lanes per 256-element
// super-block. Part c takes the 32 code bytes qs[32c ..]: low nibbles are sub-block 2c
// (x groups 4c, 4c + 1 of the block), high nibbles sub-block 2c + 1 (groups 4c + 2, 4c + 3).
// Per row: the 32 code bytes, the three scale words (both sub-blocks' scales and mins decoded
// at once) and the d/dmin word;
// y = d * (sc0 * sum q*x + sc1 * ...) - dmin * (mn0 * sum x + mn1 * ...) over each sub-block.
// The 144-byte blocks are whole 16-byte words, so the weights are bound as vec4 and a part
// takes three 16-byte loads: the block's header (d and dmin in .x, the 12 scale bytes in .yzw)
// and its 32 code bytes. Why: scalar word loads spread over the 8 blocks a warp step covers
// cost the L1 one pass per 128-byte line each; 3 wide loads replace 12 narrow ones.
@group(0) @binding(1) var<storage, read> wv: array<vec4<u32>>;
var<private> w: array<u32, 1>;  // the q_bytes helpers compile against it; never read here
const I8_PARTS: u32 = 4u;
const_assert Q_BLOCK_BYTES % 16u == 0u && Q_OFF_QS % 16u == 0u;
const_assert Q_OFF_D == 0u && Q_OFF_DMIN == 2u && Q_OFF_SCALES == 4u && QK == 256u;

fn i8_dot(blk: u32, b: u32, c: u32) -> f32 {
  let h = wv[blk >> 4u];
  let qi = (blk + Q_OFF_QS + 32u * c) >> 4u;
  let qa = wv[qi];
  let qb = wv[qi + 1u];
  let sm = scale_min_pair_k(h.y, h.z, h.w, c);
  let dm = unpack2x16float(h.x);
  let m4 = vec4<u32>(0x0F0F0F0Fu);
  let g = 16u * b + 4u * c;
  let lo = xdot(qa & m4, g) + xdot(qb & m4, g + 1u);
  let hi = xdot((qa >> vec4<u32>(4u)) & m4, g + 2u) + xdot((qb >> vec4<u32>(4u)) & m4, g + 3u);
  return dm.x * (sm.x * lo + sm.y * hi) - dm.y * (sm.z * (xsum(g) + xsum(g + 1u)) + sm.w * (xsum(g + 2u) + xsum(g + 3u)));
}
