// Split-KV attention for few queries (decode), pass 1 of 2, tile variant (the default where it
// fits). Workgroup (split, kv head g, query i) owns TPW tiles of C consecutive keys, for all G
// query heads of kv head g (each K/V byte is read once per query). Why this shape: decode
// attention is a pure stream of the cache, and on a large GPU the stream only reaches memory
// bandwidth when most of it is requested at once. Here each tile's K and V rows are fetched by
// the whole workgroup as raw vec4<u32> words, every invocation issuing all of its loads before
// storing any (2 C D / (EPV WG) loads in flight per invocation), into workgroup memory; with
// one tile per workgroup (the default up to ~1024 workgroups) the first wave of workgroups
// requests the whole cache. The arithmetic then runs from workgroup memory:
//   scores  invocation (h, j) of the first G C: s = q_h . k_j (q pre-scaled, in workgroup
//           memory), masked / causal / past-the-end keys NEG_BIG;
//   max     per head over the tile, a tree over workgroup memory (no subgroups needed);
//   probs   invocation (h, j): p = exp(s - m_new), m_new = max(running max, tile max);
//   values  invocation (h, word e of a row) of the G * RW: rescales its accumulator by
//           exp(m_old - m_new) and adds sum_j p_j v_j[e] over the tile (EPW = 2 dims per
//           word for f16, 1 for f32); it also keeps l (sum of p) for its head.
// The partial state (m, l, unnormalized acc) goes out in the format of attention_decode, for
// attention_decode_reduce. K/V rows are padded by one vec4 in workgroup memory (RVP = RV + 1)
// so that the score phase, whose consecutive invocations read consecutive keys at the same
// column, spreads over the memory banks.
// Defines: Q_F16, K_F16, M_F16 (packed f16 operands), D, G, C (keys per tile, a power of two
// with G * C <= WG), TPW (tiles per workgroup), WG.
#include "attention_common"
#include "ew_f16"

const Q_F16: bool = {{Q_F16}};
const K_F16: bool = {{K_F16}};
const M_F16: bool = {{M_F16}};
const D: u32 = {{D}}u;
const G: u32 = {{G}}u;
const C: u32 = {{C}}u;
const TPW: u32 = {{TPW}}u;
const WG: u32 = {{WG}}u;
const EPV: u32 = select(4u, 8u, K_F16);  // K/V elements per vec4<u32> word
const EPW: u32 = select(1u, 2u, K_F16);  // K/V elements per u32
const RV: u32 = D / EPV;                 // vec4 words per K/V row
const RVP: u32 = RV + 1u;                // padded row stride in workgroup memory
const RW: u32 = RV * 4u;                 // u32 per row
const NL: u32 = (2u * C * RV + WG - 1u) / WG;  // loads per invocation per tile
const NO: u32 = (G * RW + WG - 1u) / WG;       // output words per invocation
const_assert D % EPV == 0u && G * C <= WG && (C & (C - 1u)) == 0u;

@group(0) @binding(0) var<storage, read> q: array<u32>;
@group(0) @binding(1) var<storage, read> k: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> v: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
// Partials, indexed by ((i * heads + h) * n_split + split): acc [.., D], ml [.., 2] = (m, l).
@group(0) @binding(4) var<storage, read_write> part_acc: array<f32>;
@group(0) @binding(5) var<storage, read_write> part_ml: array<f32>;
@group(0) @binding(6) var<uniform> p: AttnParams;

var<workgroup> kt: array<vec4<u32>, C * RVP>;
var<workgroup> vt: array<vec4<u32>, C * RVP>;
var<workgroup> qs: array<vec4<f32>, G * D / 4u>;
var<workgroup> ps: array<f32, G * C>;  // scores, then probabilities, of the tile
var<workgroup> red: array<f32, G * C>; // per-head max tree

fn ld_q(i: u32) -> f32 {
  if (Q_F16) { return f16_at(q[i >> 1u], i); }
  return bitcast<f32>(q[i]);
}
fn ld_m(i: u32) -> f32 {
  if (M_F16) { return f16_at(mask[i >> 1u], i); }
  return bitcast<f32>(mask[i]);
}
// Element pair (f16) or element (f32, in .x) of u32 word w of a K/V row.
fn widen2(w: u32) -> vec2<f32> {
  if (K_F16) { return unpack2x16float(w); }
  return vec2<f32>(bitcast<f32>(w), 0.0);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let split = wid.x;
  let g = wid.y;
  let qi = wid.z;
  let j0 = split * p.chunk;
  var j_end = min(p.lk, j0 + p.chunk);
  // Causal: query qi sees keys j < lk - lq + qi + 1 (none when that is <= 0).
  if (p.causal != 0u) { j_end = select(0u, min(j_end, p.lk + qi + 1u - p.lq), p.lk + qi + 1u > p.lq); }

  for (var e = lid; e < G * D / 4u; e += WG) {
    let b = (qi * p.heads + g * G) * D + e * 4u;  // heads g*G .. g*G + G - 1 are contiguous
    qs[e] = vec4<f32>(ld_q(b), ld_q(b + 1u), ld_q(b + 2u), ld_q(b + 3u)) * p.scale;
  }

  // The value-phase invocations own output words o = lid + WG * t: head o / RW, word o % RW.
  var acc: array<vec2<f32>, NO>;
  var m_run: array<f32, NO>;
  var l_run: array<f32, NO>;
  for (var t = 0u; t < NO; t++) {
    acc[t] = vec2<f32>(0.0);
    m_run[t] = NEG_BIG;
    l_run[t] = 0.0;
  }
  let sh = lid / C;  // score phase: head and key of this invocation (sh < G: it has one)
  let sj = lid % C;
  var m_s = NEG_BIG;  // score phase: running max of head sh (the same sequence as m_run)

  // Every invocation runs the same tile loop (bounds depend on the workgroup only), so the
  // barriers below are in uniform control flow.
  for (var tile = 0u; tile < TPW; tile++) {
    let t0 = j0 + tile * C;
    let n = select(0u, min(C, j_end - t0), j_end > t0);  // keys of this tile
    if (n == 0u) { break; }
    workgroupBarrier();  // the previous tile's K/V and probabilities are no longer read
    // All loads first, then the stores: up to NL words in flight per invocation.
    var buf: array<vec4<u32>, NL>;
    for (var i = 0u; i < NL; i++) {
      let w = lid + i * WG;
      let r = (w % (C * RV)) / RV;
      if (w < 2u * C * RV && r < n) {
        let src = ((t0 + r) * p.kv_heads + g) * RV + w % RV;
        if (w >= C * RV) { buf[i] = v[src]; } else { buf[i] = k[src]; }
      }
    }
    for (var i = 0u; i < NL; i++) {
      let w = lid + i * WG;
      let r = (w % (C * RV)) / RV;
      if (w < 2u * C * RV && r < n) {
        let dst = r * RVP + w % RV;
        if (w >= C * RV) { vt[dst] = buf[i]; } else { kt[dst] = buf[i]; }
      }
    }
    workgroupBarrier();

    var s = NEG_BIG;
    if (sh < G && sj < n) {
      let j = t0 + sj;
      if (visible(qi, j)) {
        var sd = 0.0;
        for (var c = 0u; c < RV; c++) {
          let w = kt[sj * RVP + c];
          if (K_F16) {
            sd += dot(qs[sh * (D / 4u) + 2u * c], vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)));
            sd += dot(qs[sh * (D / 4u) + 2u * c + 1u], vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w)));
          } else {
            sd += dot(qs[sh * (D / 4u) + c], bitcast<vec4<f32>>(w));
          }
        }
        var mv = 0.0;
        if (p.has_mask != 0u) { mv = ld_m(p.m_off + qi * p.lk + j); }
        // A -inf mask gives -inf here, clamped to NEG_BIG: excluded, never inf - inf.
        s = max(sd + mv, NEG_BIG);
      }
    }
    if (sh < G) { red[lid] = s; }
    for (var w = C / 2u; w > 0u; w /= 2u) {
      workgroupBarrier();
      if (sh < G && sj < w) { red[lid] = max(red[lid], red[lid + w]); }
    }
    workgroupBarrier();
    // red[h * C] is head h's tile max; every value-phase invocation derives the same new
    // running max from it, so the probabilities and the rescaling agree.
    if (sh < G) {
      m_s = max(m_s, red[sh * C]);
      ps[lid] = select(0.0, exp(s - m_s), s > NEG_LIMIT);
    }
    workgroupBarrier();
    for (var t = 0u; t < NO; t++) {
      let o = lid + t * WG;
      if (o < G * RW) {
        let h = o / RW;
        let e = o % RW;
        let m_new = max(m_run[t], red[h * C]);
        let cf = exp(m_run[t] - m_new);
        var a = acc[t] * cf;
        var l = l_run[t] * cf;
        for (var j = 0u; j < n; j++) {
          let pj = ps[h * C + j];
          a += pj * widen2(vt[j * RVP + e / 4u][e % 4u]);
          l += pj;
        }
        acc[t] = a;
        l_run[t] = l;
        m_run[t] = m_new;
      }
    }
  }

  for (var t = 0u; t < NO; t++) {
    let o = lid + t * WG;
    if (o < G * RW) {
      let h = o / RW;
      let e = o % RW;
      let slot = (qi * p.heads + g * G + h) * p.n_split + split;
      let d = e * EPW;
      part_acc[slot * D + d] = acc[t].x;
      if (K_F16) { part_acc[slot * D + d + 1u] = acc[t].y; }
      if (e == 0u) {
        part_ml[slot * 2u] = m_run[t];
        part_ml[slot * 2u + 1u] = l_run[t];
      }
    }
  }
}
