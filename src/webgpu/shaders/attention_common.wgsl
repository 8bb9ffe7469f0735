// Shared by the attention kernels (included, not a kernel): the params block mirrored by
// AttnParams in kernels/nn.cpp, and the "no score" sentinel. Scores of excluded keys (causal,
// -inf mask) are clamped to NEG_BIG instead of -inf, so that no inf - inf can produce a NaN;
// anything at or below NEG_LIMIT counts as excluded and contributes exactly 0.
// NaN propagates (docs/semantics.md): a NaN score (NaN in q, a visible k or the mask) or a +inf
// one makes the softmax of that (query, head) NaN, as on the CPU, where max-subtraction gives
// NaN - NaN or inf - inf. WGSL's max may drop a NaN, so attn_score turns such a score into +inf
// (by bit test), which max keeps: a running max of +inf marks the row, through the online
// softmax and the split merge, and the kernel that stores the output stores NaN for it.
// A key of weight 0 (excluded, or exp underflowed) is skipped, so a NaN in its v row does not
// reach the output (the CPU skips it too).

struct AttnParams {
  lq: u32, lk: u32, heads: u32, kv_heads: u32,
  group: u32, causal: u32, has_mask: u32, n_split: u32,
  chunk: u32, q_off: u32, k_off: u32, v_off: u32,
  m_off: u32, scale: f32, inf_bits: u32, pad1: u32,  // inf_bits: 0x7f800000 from the host
}

// inf and NaN from the host's bits: a constant one would be a WGSL const-eval error.
fn attn_inf() -> f32 { return bitcast<f32>(p.inf_bits); }
fn attn_nan() -> f32 { return bitcast<f32>(p.inf_bits | 0x00400000u); }
// A raw score (dot * scale + mask) as the kernels keep it: clamped below to NEG_BIG, NaN and
// +inf as +inf (the row marker).
fn attn_score(s: f32) -> f32 {
  let b = bitcast<u32>(s) & 0x7fffffffu;
  if (b > 0x7f800000u || bitcast<u32>(s) == 0x7f800000u) { return attn_inf(); }
  return max(s, NEG_BIG);
}
// Is the running max (or a merged one) the marker of a NaN row?
fn attn_poisoned(m: f32) -> bool { return bitcast<u32>(m) == 0x7f800000u; }

const NEG_BIG: f32 = -1.0e30;
const NEG_LIMIT: f32 = -1.0e29;

// True when query i may look at key j (causal: queries are the last lq positions).
fn visible(i: u32, j: u32) -> bool {
  return j < p.lk && (p.causal == 0u || j + p.lq <= p.lk + i);
}

