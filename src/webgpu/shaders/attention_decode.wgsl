// Split-KV attention for few queries (decode), pass 1 of 2. Workgroup (split, kv head g,
// query i) handles keys [split * chunk, (split + 1) * chunk) for ALL the G query heads that
// share kv head g, so every K/V byte is read from memory once per query (GQA reuse). K and V
// tiles of T keys are staged in workgroup memory; per head it keeps an online softmax and
// writes the partial state (max, sum, unnormalized accumulator) that
// attention_decode_reduce combines. Defines: Q_F16, K_F16, M_F16 (f32 or packed f16 operands,
// see attention_inputs), D, G, T.
#include "attention_common"
#include "attention_inputs"

const WG: u32 = 128u;
const D: u32 = {{D}}u;
const G: u32 = {{G}}u;
const T: u32 = {{T}}u;
// Staged rows padded to D + 1 words: consecutive invocations score consecutive keys at the
// same d, which with a stride of D (often a multiple of 32) would hit one memory bank.
const DS: u32 = D + 1u;

// Partials, indexed by ((i * heads + h) * n_split + split): acc [.., D], ml [.., 2] = (m, l).
@group(0) @binding(4) var<storage, read_write> part_acc: array<f32>;
@group(0) @binding(5) var<storage, read_write> part_ml: array<f32>;
@group(0) @binding(6) var<uniform> p: AttnParams;

var<workgroup> qs: array<f32, G * DS>;
var<workgroup> acc: array<f32, G * D>;
var<workgroup> ks: array<f32, T * DS>;
var<workgroup> vs: array<f32, T * DS>;
var<workgroup> sc: array<f32, G * T>;  // scores, then probabilities, of the current tile
var<workgroup> ms: array<f32, G>;
var<workgroup> ls: array<f32, G>;
var<workgroup> corr: array<f32, G>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let split = wid.x;
  let g = wid.y;
  let qi = wid.z;
  let j0 = split * p.chunk;
  var j_end = min(p.lk, j0 + p.chunk);
  if (p.causal != 0u) { j_end = min(j_end, p.lk - p.lq + qi + 1u); }
  for (var e = lid; e < G * D; e += WG) {
    let h = g * G + e / D;
    qs[(e / D) * DS + e % D] = ld_q(p.q_off + (qi * p.heads + h) * D + e % D) * p.scale;
    acc[e] = 0.0;
  }
  if (lid < G) {
    ms[lid] = NEG_BIG;
    ls[lid] = 0.0;
  }
  for (var kt = j0; kt < j_end; kt += T) {
    workgroupBarrier();
    for (var e = lid; e < T * D; e += WG) {
      let j = kt + e / D;
      var kv = 0.0;
      var vv = 0.0;
      if (j < j_end) {
        let src = (j * p.kv_heads + g) * D + e % D;
        kv = ld_k(p.k_off + src);
        vv = ld_v(p.v_off + src);
      }
      ks[(e / D) * DS + e % D] = kv;
      vs[(e / D) * DS + e % D] = vv;
    }
    workgroupBarrier();
    for (var e = lid; e < G * T; e += WG) {
      let r = e / T;
      let j = kt + e % T;
      var sv = NEG_BIG;
      if (j < j_end) {
        var dot = 0.0;
        for (var d = 0u; d < D; d++) { dot += qs[r * DS + d] * ks[(e % T) * DS + d]; }
        if (p.has_mask != 0u) { dot += ld_m(p.m_off + qi * p.lk + j); }
        sv = attn_score(dot);
      }
      sc[e] = sv;
    }
    workgroupBarrier();
    if (lid < G) {
      var tmax = NEG_BIG;
      for (var c = 0u; c < T; c++) { tmax = max(tmax, sc[lid * T + c]); }
      var cf = 1.0;
      if (tmax > NEG_LIMIT) {
        let m_new = max(ms[lid], tmax);
        cf = exp(ms[lid] - m_new);
        var sum = 0.0;
        for (var c = 0u; c < T; c++) {
          let sv = sc[lid * T + c];
          let pv = select(0.0, exp(sv - m_new), sv > NEG_LIMIT);
          sc[lid * T + c] = pv;
          sum += pv;
        }
        ls[lid] = ls[lid] * cf + sum;
        ms[lid] = m_new;
      } else {
        for (var c = 0u; c < T; c++) { sc[lid * T + c] = 0.0; }
      }
      corr[lid] = cf;
    }
    workgroupBarrier();
    for (var e = lid; e < G * D; e += WG) {
      let r = e / D;
      let d = e % D;
      var a = acc[e] * corr[r];
      for (var c = 0u; c < T; c++) {
        let w = sc[r * T + c];
        a += select(0.0, w * vs[c * DS + d], w != 0.0);  // weight 0: a NaN in v stays out
      }
      acc[e] = a;
    }
  }
  workgroupBarrier();
  for (var e = lid; e < G * D; e += WG) {
    let h = g * G + e / D;
    let slot = (qi * p.heads + h) * p.n_split + split;
    part_acc[slot * D + e % D] = acc[e];
    if (e % D == 0u) {
      part_ml[slot * 2u] = ms[e / D];
      part_ml[slot * 2u + 1u] = ls[e / D];
    }
  }
}
