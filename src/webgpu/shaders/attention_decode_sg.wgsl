enable subgroups;
// Split-KV attention for few queries (decode), pass 1 of 2, subgroup variant: K/V stream from
// global memory into registers with no workgroup staging. Workgroup (split, kv head g, query i)
// owns keys [split * chunk, (split + 1) * chunk) for the G query heads of kv head g (GQA: each
// K/V byte is read once per query). L consecutive invocations (a "lane group") own one key at
// a time: lane `lane` holds NQ vec4 slices of the key's head dims, loaded as vec4<u32> words so
// that the L lanes of one load instruction read L * 16 contiguous bytes. Each lane keeps the G
// query heads' slices of q (pre-scaled) and an online-softmax state (m, l per head and acc over
// its dims of V) in registers; the L partial dots are summed with subgroupShuffleXor, so every
// lane of the group sees the G scores. The WG / L groups interleave keys, U keys per group per
// loop trip (more loads in flight). At the end of the chunk the groups' states are merged
// (shuffles within a subgroup, workgroup memory across subgroups) into the partial format of
// attention_decode (part_acc, part_ml) that attention_decode_reduce combines.
// DIRECT (the plan's choice when there is one split, e.g. a short context): the merged state
// is the whole row's, so the workgroup divides by l and stores O (attention_out's store_o,
// O_F16 as there) with the reduction's arithmetic, and the reduction pass is not launched:
// one dispatch and one round trip through the partials less.
//
// The launcher (kernels/nn.cpp) picks this kernel only when L <= the device's smallest
// subgroup and WG is a multiple of its largest one, and relies, like q_mv_stream_sg, on
// subgroups being aligned runs of local_invocation_index in a 1-D workgroup.
// Defines: Q_F16, K_F16, M_F16 (packed f16 operands), D, G, L, WG, U, SG_MIN, DIRECT, O_F16.
#include "attention_common"
#include "ew_f16"

const Q_F16: bool = {{Q_F16}};
const K_F16: bool = {{K_F16}};
const M_F16: bool = {{M_F16}};
const D: u32 = {{D}}u;
const G: u32 = {{G}}u;
const L: u32 = {{L}}u;
const WG: u32 = {{WG}}u;
const U: u32 = {{U}}u;
const NGRP: u32 = WG / L;              // lane groups of the workgroup
const EPV: u32 = select(4u, 8u, K_F16);  // K/V elements per vec4<u32> load
const PER: u32 = EPV / 4u;             // vec4<f32> slices per load
const RV: u32 = D / EPV;               // vec4<u32> words per K/V row
const NV: u32 = RV / L;                // loads per lane per row
const NQ: u32 = NV * PER;              // vec4<f32> slices per lane per row
const NSUB: u32 = WG / {{SG_MIN}}u;    // most subgroups a workgroup can have

@group(0) @binding(0) var<storage, read> q: array<u32>;
@group(0) @binding(1) var<storage, read> k: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> v: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
#if DIRECT
const O_F16: bool = {{O_F16}};
@group(0) @binding(4) var<storage, read_write> o: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> p: AttnParams;
#include "attention_out"
#else
// Partials, indexed by ((i * heads + h) * n_split + split): acc [.., D], ml [.., 2] = (m, l).
@group(0) @binding(4) var<storage, read_write> part_acc: array<f32>;
@group(0) @binding(5) var<storage, read_write> part_ml: array<f32>;
@group(0) @binding(6) var<uniform> p: AttnParams;
#endif

var<workgroup> wm: array<f32, NSUB * G>;  // per-subgroup maxima
var<workgroup> wacc: array<f32, G * D>;   // merged accumulator, natural dim order
var<workgroup> wl: array<f32, G>;

fn ld_q(i: u32) -> f32 {
  if (Q_F16) { return f16_at(q[i >> 1u], i); }
  return bitcast<f32>(q[i]);
}
fn ld_m(i: u32) -> f32 {
  if (M_F16) { return f16_at(mask[i >> 1u], i); }
  return bitcast<f32>(mask[i]);
}

// Slice t (of NQ) of a lane's row as f32: load t / PER, half t % PER of it for f16.
fn widen(w: vec4<u32>, t: u32) -> vec4<f32> {
  if (K_F16) {
    if (t % 2u == 0u) { return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }
    return vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w));
  }
  return bitcast<vec4<f32>>(w);
}

// First head dim of slice t of lane `lane` (4 consecutive dims).
fn dim_of(lane: u32, t: u32) -> u32 { return ((t / PER) * L + lane) * EPV + (t % PER) * 4u; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) sgs: u32) {
  let split = wid.x;
  let g = wid.y;
  let qi = wid.z;
  let grp = lid / L;
  let lane = lid % L;
  let j0 = split * p.chunk;
  var j_end = min(p.lk, j0 + p.chunk);
  // Causal: query qi sees keys j < lk - lq + qi + 1 (none when that is <= 0).
  if (p.causal != 0u) { j_end = select(0u, min(j_end, p.lk + qi + 1u - p.lq), p.lk + qi + 1u > p.lq); }

  var qr: array<vec4<f32>, G * NQ>;
  var acc: array<vec4<f32>, G * NQ>;
  var m: array<f32, G>;
  var l: array<f32, G>;
  for (var h = 0u; h < G; h++) {
    let qb = p.q_off + (qi * p.heads + g * G + h) * D;
    for (var t = 0u; t < NQ; t++) {
      let d = qb + dim_of(lane, t);
      qr[h * NQ + t] = vec4<f32>(ld_q(d), ld_q(d + 1u), ld_q(d + 2u), ld_q(d + 3u)) * p.scale;
      acc[h * NQ + t] = vec4<f32>(0.0);
    }
    m[h] = NEG_BIG;
    l[h] = 0.0;
  }

  // The trip count depends only on the workgroup, so the shuffles below run in uniform
  // control flow; keys past j_end are loaded from a clamped (valid) row and scored NEG_BIG.
  for (var kt = j0; kt < j_end; kt += NGRP * U) {
    var kw: array<vec4<u32>, U * NV>;
    var vw: array<vec4<u32>, U * NV>;
    var s: array<f32, U * G>;
    // Issue every load of the trip first: V is not needed until the scores are known.
    for (var u = 0u; u < U; u++) {
      let jc = min(kt + u * NGRP + grp, j_end - 1u);
      let row = (jc * p.kv_heads + g) * RV + lane;
      for (var c = 0u; c < NV; c++) {
        kw[u * NV + c] = k[p.k_off / EPV + row + c * L];
        vw[u * NV + c] = v[p.v_off / EPV + row + c * L];
      }
    }
    for (var u = 0u; u < U; u++) {
      let j = kt + u * NGRP + grp;
      let vis = j < j_end && visible(qi, j);
      var mv = 0.0;
      if (vis && p.has_mask != 0u) { mv = ld_m(p.m_off + qi * p.lk + j); }
      for (var h = 0u; h < G; h++) {
        var sd = 0.0;
        for (var t = 0u; t < NQ; t++) { sd += dot(qr[h * NQ + t], widen(kw[u * NV + t / PER], t)); }
        for (var o = 1u; o < L; o <<= 1u) { sd += subgroupShuffleXor(sd, o); }
        // A -inf mask gives -inf here, clamped to NEG_BIG: excluded, never inf - inf; NaN and
        // +inf become the +inf row marker (attn_score).
        s[u * G + h] = select(NEG_BIG, attn_score(sd + mv), vis);
      }
    }
    // Online softmax; the accumulator is rescaled only when the running max grows.
    for (var h = 0u; h < G; h++) {
      var mn = m[h];
      for (var u = 0u; u < U; u++) { mn = max(mn, s[u * G + h]); }
      if (mn > m[h]) {
        let cf = exp(m[h] - mn);
        l[h] *= cf;
        for (var t = 0u; t < NQ; t++) { acc[h * NQ + t] *= cf; }
        m[h] = mn;
      }
      for (var u = 0u; u < U; u++) {
        let sv = s[u * G + h];
        let pv = select(0.0, exp(sv - m[h]), sv > NEG_LIMIT);
        l[h] += pv;
        // Weight 0 (excluded, or a clamped row past j_end): v is not added, so a NaN there stays
        // out. One test per key and head (the lanes of a group share pv), not per slice.
        if (pv != 0.0) {
          for (var t = 0u; t < NQ; t++) { acc[h * NQ + t] += pv * widen(vw[u * NV + t / PER], t); }
        }
      }
    }
  }

  // Merge the groups' states. First the workgroup's max per head, so that after rescaling
  // every state to it the merge is a plain sum.
  let sub = lid / sgs;
  let nsub = WG / sgs;
  for (var h = 0u; h < G; h++) {
    var x = m[h];
    for (var o = L; o < sgs; o <<= 1u) { x = max(x, subgroupShuffleXor(x, o)); }
    if (sid == 0u) { wm[sub * G + h] = x; }
  }
  workgroupBarrier();
  var mw: array<f32, G>;
  for (var h = 0u; h < G; h++) {
    var x = NEG_BIG;
    for (var r = 0u; r < nsub; r++) { x = max(x, wm[r * G + h]); }
    mw[h] = x;
    // m <= x; exp underflows to 0 for a group whose keys were all far below the max.
    let cf = exp(m[h] - x);
    var lh = l[h] * cf;
    for (var o = L; o < sgs; o <<= 1u) { lh += subgroupShuffleXor(lh, o); }
    l[h] = lh;
    for (var t = 0u; t < NQ; t++) {
      var a = acc[h * NQ + t] * cf;
      for (var o = L; o < sgs; o <<= 1u) { a += subgroupShuffleXor(a, o); }
      acc[h * NQ + t] = a;
    }
  }
  // Every lane group of a subgroup now holds the subgroup's sum; the first one of each
  // subgroup adds it into workgroup memory, one subgroup per round.
  for (var r = 0u; r < nsub; r++) {
    if (sub == r && sid < L) {
      for (var h = 0u; h < G; h++) {
        for (var t = 0u; t < NQ; t++) {
          let a = acc[h * NQ + t];
          let e = h * D + dim_of(lane, t);
          if (r == 0u) {
            wacc[e] = a.x;
            wacc[e + 1u] = a.y;
            wacc[e + 2u] = a.z;
            wacc[e + 3u] = a.w;
          } else {
            wacc[e] += a.x;
            wacc[e + 1u] += a.y;
            wacc[e + 2u] += a.z;
            wacc[e + 3u] += a.w;
          }
        }
        if (lane == 0u) { wl[h] = select(wl[h] + l[h], l[h], r == 0u); }
      }
    }
    workgroupBarrier();
  }
#if DIRECT
  // attention_decode_reduce with one split: weight exp(m - m) = 1 (0 when l == 0, where acc is
  // 0 too), out = acc / l (0 without a visible key), NaN for a poisoned row.
  for (var e = lid; e < G * D; e += WG) {
    let h = e / D;
    let inv = select(0.0, 1.0 / wl[h], wl[h] > 0.0);
    store_o((qi * p.heads + g * G + h) * D + e % D, select(wacc[e] * inv, attn_nan(), attn_poisoned(mw[h])));
  }
#else
  for (var e = lid; e < G * D; e += WG) {
    let h = e / D;
    let slot = (qi * p.heads + g * G + h) * p.n_split + split;
    part_acc[slot * D + e % D] = wacc[e];
    if (e % D == 0u) {
      part_ml[slot * 2u] = mw[h];
      part_ml[slot * 2u + 1u] = wl[h];
    }
  }
#endif
}
