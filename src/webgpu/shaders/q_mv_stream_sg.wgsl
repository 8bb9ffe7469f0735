enable subgroups;
// Streaming quantized matvec, subgroup reduction. The launcher picks it only when the
// device's largest subgroup is at most 32 invocations, so that a subgroup never spans two
// warps: this relies on subgroups being consecutive, aligned runs of
// local_invocation_index in a 1-D workgroup, which holds on the Vulkan, D3D12 and Metal
// drivers we know of (and is covered by the lavapipe tests). For each of the warp's ROWS
// sums, subgroupAdd sums each subgroup and its leader stores the sum; after one barrier,
// lane r of the warp adds the 32 / subgroup_size leaders' sums of row r (one read on a
// 32-wide device) and stores y, so the ROWS outputs are written in parallel (with KSPLIT > 1,
// the first warp of each set does so for the set's KSPLIT warps).
#include "q_mv_stream_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) sgs: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= p.m) { return; }  // uniform per workgroup
  let warp = lid / LANES;
  let lane = lid % LANES;
  let rows = warp_rows(g.y, warp);
  xrow = g.x * (p.k / 4u);
  // Called by every invocation, rows or not: a source may have barriers inside.
  let acc = warp_partials(g.x, rows.x, rows.y, lane, warp);
  for (var r = 0u; r < NR; r = r + 1u) {
    let t = subgroupAdd(lane_sum(acc, r));
    if (sid == 0u) { red[r * WG + lid] = t; }
  }
  workgroupBarrier();
  // The first warp of each KSPLIT set adds the set's sums (the ssq is every warp's own).
#if EPI
  // Every lane sums (lanes past the warp's rows a row they do not store), so that the shuffle
  // runs in uniform control flow; even lane r stores the pair (row r, row r + 1).
  let base = min(lane, ROWS - 1u) * WG + warp * LANES;
  var s = 0.0;
  var sq = 0.0;
  for (var i = 0u; i < LANES; i = i + sgs) {
    for (var j = 0u; j < KSPLIT; j = j + 1u) { s = s + red[base + j * LANES + i]; }
    if (NORM) { sq = sq + red[ROWS * WG + warp * LANES + i]; }
  }
  let v = s * out_scale(sq);
  let next = subgroupShuffleXor(v, 1u);
  if (warp % KSPLIT == 0u && lane < rows.y && (lane & 1u) == 0u) { epi_pair(g.x * p.n, rows.x + lane, v, next); }
#else
  if (warp % KSPLIT == 0u && lane < rows.y) {
    let base = lane * WG + warp * LANES;
    var s = 0.0;
    var sq = 0.0;
    for (var i = 0u; i < LANES; i = i + sgs) {
      for (var j = 0u; j < KSPLIT; j = j + 1u) { s = s + red[base + j * LANES + i]; }
      if (NORM) { sq = sq + red[ROWS * WG + warp * LANES + i]; }
    }
    let i = g.x * p.n + rows.x + lane;
    y[i] = out_value(s * out_scale(sq), i);
  }
#endif
}
