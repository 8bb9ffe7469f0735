// Flash-style attention (prefill): one workgroup = BQ queries of one head. It walks the keys
// in tiles of BK staged in workgroup memory and keeps an online softmax per query (running
// max m, running sum l, unnormalized accumulator), so the [q_len, kv_len] score matrix is
// never materialized. TPR invocations share a query row: each owns the head dims
// lane, lane + TPR, ... (DPT of them, in registers) and the keys lane, lane + TPR, ... of a
// tile for the scores. Defines: Q_F16 (q and the output), K_F16 (k/v), M_F16 (mask), D (head
// dim), DPT = ceil(D / TPR); operands are f32 or packed f16 (attention_inputs).
#include "attention_common"
#include "attention_inputs"

const BQ: u32 = 16u;
const BK: u32 = 16u;
const TPR: u32 = 8u;
const WG: u32 = 128u;  // BQ * TPR
const D: u32 = {{D}}u;
const DPT: u32 = {{DPT}}u;
// Rows of the staged tiles are padded to D + 1 words: the lanes of a row read different keys
// at the same d, which with a stride of D (often a multiple of 32) would hit one memory bank.
const DS: u32 = D + 1u;

const O_F16: bool = Q_F16;
@group(0) @binding(4) var<storage, read_write> o: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> p: AttnParams;
#include "attention_out"

var<workgroup> qs: array<f32, BQ * DS>;  // scaled queries of the tile
var<workgroup> ks: array<f32, BK * DS>;
var<workgroup> vs: array<f32, BK * DS>;
var<workgroup> sc: array<f32, BQ * BK>;  // scores of the current key tile

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let q0 = wid.x * BQ;
  let h = wid.y;
  let g = h / p.group;
  let r = lid / TPR;
  let lane = lid % TPR;
  let qi = q0 + r;
  for (var e = lid; e < BQ * D; e += WG) {
    let qq = q0 + e / D;
    var val = 0.0;
    if (qq < p.lq) { val = ld_q(p.q_off + (qq * p.heads + h) * D + e % D) * p.scale; }
    qs[(e / D) * DS + e % D] = val;
  }
  // Keys past the last one visible to the tile's last query are never loaded.
  var kv_end = p.lk;
  if (p.causal != 0u) { kv_end = min(p.lk, p.lk - p.lq + min(q0 + BQ, p.lq)); }
  var m = NEG_BIG;
  var l = 0.0;
  var acc: array<f32, DPT>;
  for (var kt = 0u; kt < kv_end; kt += BK) {
    workgroupBarrier();
    for (var e = lid; e < BK * D; e += WG) {
      let j = kt + e / D;
      var kv = 0.0;
      var vv = 0.0;
      if (j < p.lk) {
        let src = (j * p.kv_heads + g) * D + e % D;
        kv = ld_k(p.k_off + src);
        vv = ld_v(p.v_off + src);
      }
      ks[(e / D) * DS + e % D] = kv;
      vs[(e / D) * DS + e % D] = vv;
    }
    workgroupBarrier();
    for (var c = lane; c < BK; c += TPR) {
      let j = kt + c;
      var sv = NEG_BIG;
      if (qi < p.lq && visible(qi, j)) {
        var dot = 0.0;
        for (var d = 0u; d < D; d++) { dot += qs[r * DS + d] * ks[c * DS + d]; }
        if (p.has_mask != 0u) { dot += ld_m(p.m_off + qi * p.lk + j); }
        sv = attn_score(dot);
      }
      sc[r * BK + c] = sv;
    }
    workgroupBarrier();
    // Online softmax update of row r (its TPR lanes compute identical m and l).
    var tmax = NEG_BIG;
    for (var c = 0u; c < BK; c++) { tmax = max(tmax, sc[r * BK + c]); }
    if (tmax > NEG_LIMIT) {
      let m_new = max(m, tmax);
      let corr = exp(m - m_new);
      l *= corr;
      for (var t = 0u; t < DPT; t++) { acc[t] *= corr; }
      for (var c = 0u; c < BK; c++) {
        let sv = sc[r * BK + c];
        if (sv > NEG_LIMIT) {
          let pv = exp(sv - m_new);
          l += pv;
          if (pv != 0.0) {  // weight 0: v is not read (a NaN there stays out)
            for (var t = 0u; t < DPT; t++) {
              let d = lane + t * TPR;
              if (d < D) { acc[t] += pv * vs[c * DS + d]; }
            }
          }
        }
      }
      m = m_new;
    }
  }
  if (qi >= p.lq) { return; }
  // A row that saw no key (all masked) stays 0, as in the reference.
  // A NaN / +inf score (running max +inf) gives a NaN row.
  let inv = select(0.0, 1.0 / l, l > 0.0);
  let bad = attn_poisoned(m);
  for (var t = 0u; t < DPT; t++) {
    let d = lane + t * TPR;
    if (d < D) { store_o((qi * p.heads + h) * D + d, select(acc[t] * inv, attn_nan(), bad)); }
  }
}
