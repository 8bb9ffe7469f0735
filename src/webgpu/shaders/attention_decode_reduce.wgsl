// Split-KV attention, pass 2 of 2: combines the n_split partial softmax states of one
// (query, head): M = max m_s, L = sum l_s e^(m_s - M), out = sum acc_s e^(m_s - M) / L.
// Workgroup (query * head, block of DB head dims): DB * SL invocations, invocation (sl, dl)
// owns dim dl of the block and the splits sl, sl + SL, ... of each tile. Why split lanes: the
// partial accumulators were just written (L2), and a single invocation summing all n_split
// of them waits for n_split / (the loads the compiler keeps in flight) round trips; with SL
// lanes per dim each has n_split / SL loads, and the workgroups of a head's dim blocks run in
// parallel. The split weights e^(m_s - M) are computed once per split into workgroup memory
// (a tile of ST splits at a time, so any n_split works); the SL partial sums per dim are added
// through workgroup memory at the end.
// Defines: O_F16 (packed f16 output, see attention_out), D.
#include "attention_common"

const D: u32 = {{D}}u;
const DB: u32 = 32u;  // head dims per workgroup
const SL: u32 = 8u;   // split lanes per dim
const WG: u32 = DB * SL;
const ST: u32 = 256u;

@group(0) @binding(0) var<storage, read> part_acc: array<f32>;
@group(0) @binding(1) var<storage, read> part_ml: array<f32>;
const O_F16: bool = {{O_F16}};
@group(0) @binding(2) var<storage, read_write> o: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: AttnParams;
#include "attention_out"

var<workgroup> wts: array<f32, ST>;
var<workgroup> red: array<f32, WG>;

// Tree reduction of red[] (max when is_max, else sum); every invocation gets the result.
fn reduce_red(lid: u32, is_max: bool) -> f32 {
  for (var w = WG / 2u; w > 0u; w /= 2u) {
    workgroupBarrier();
    if (lid < w) {
      if (is_max) { red[lid] = max(red[lid], red[lid + w]); } else { red[lid] = red[lid] + red[lid + w]; }
    }
  }
  workgroupBarrier();
  let r = red[0];
  workgroupBarrier();  // red is reused next
  return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;  // i * heads + h
  if (row >= p.lq * p.heads) { return; }  // uniform per workgroup
  let dl = lid % DB;
  let sl = lid / DB;
  let d = wid.z * DB + dl;
  let base = row * p.n_split;
  var mx = NEG_BIG;
  for (var s = lid; s < p.n_split; s += WG) { mx = max(mx, part_ml[(base + s) * 2u]); }
  red[lid] = mx;
  mx = reduce_red(lid, true);

  var total = 0.0;
  var a = 0.0;
  for (var t0 = 0u; t0 < p.n_split; t0 += ST) {
    let nt = min(ST, p.n_split - t0);
    for (var i = lid; i < nt; i += WG) {
      let m = part_ml[(base + t0 + i) * 2u];
      let l = part_ml[(base + t0 + i) * 2u + 1u];
      // Empty splits (l == 0: no visible key) weigh 0; their m may be NEG_BIG.
      let w = select(0.0, exp(m - mx), l > 0.0);
      wts[i] = w;
      total += l * w;
    }
    workgroupBarrier();
    if (d < D) {
      for (var i = sl; i < nt; i += SL) { a += part_acc[(base + t0 + i) * D + d] * wts[i]; }
    }
    workgroupBarrier();  // wts is rewritten by the next tile
  }
  red[lid] = total;
  total = reduce_red(lid, false);
  // A split whose running max is the +inf marker saw a NaN / +inf score: the row is NaN.
  let bad = attn_poisoned(mx);
  let inv = select(0.0, 1.0 / total, total > 0.0);
  red[lid] = a;
  workgroupBarrier();
  if (sl == 0u && d < D) {
    var sum = 0.0;
    for (var j = 0u; j < SL; j++) { sum += red[j * DB + dl]; }
    store_o(row * D + d, select(sum * inv, attn_nan(), bad));
  }
}
