// Shared by the attention kernels (included, not a kernel): the params block mirrored by
// AttnParams in kernels/nn.cpp, and the "no score" sentinel. Scores of excluded keys (causal,
// -inf mask) are clamped to NEG_BIG instead of -inf, so that no inf - inf can produce a NaN;
// anything at or below NEG_LIMIT counts as excluded and contributes exactly 0.

struct AttnParams {
  lq: u32, lk: u32, heads: u32, kv_heads: u32,
  group: u32, causal: u32, has_mask: u32, n_split: u32,
  chunk: u32, q_off: u32, k_off: u32, v_off: u32,
  m_off: u32, scale: f32, pad0: u32, pad1: u32,
}

const NEG_BIG: f32 = -1.0e30;
const NEG_LIMIT: f32 = -1.0e29;

// True when query i may look at key j (causal: queries are the last lq positions).
fn visible(i: u32, j: u32) -> bool {
  return j < p.lk && (p.causal == 0u || j + p.lq <= p.lk + i);
}

