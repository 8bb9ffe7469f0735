// x-stationary quantized matvec, workgroup-memory reduction (any device; the subgroup variant
// is q_mv_xstat_sg). See q_mv_xstat_common. Per batch: every lane stores its RB sums, each
// warp sums its 32-slot segments in log2(32) steps, then invocation r < RB adds the WARPS
// warp sums of row r and stores y.
#include "q_mv_xstat_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  let warp = lid / LANES;
  let lane = lid % LANES;
  var xs = load_xs(g.x, warp, lane);
  let end = min(g.y + GROUP_ROWS, params.n);  // this workgroup's rows: g.y .. end - 1
  for (var i = 0u; i < NBATCH; i = i + 1u) {
    let n0 = g.y + i * RB;
    if (n0 >= end) { break; }  // uniform per workgroup
    let acc = batch_partials(&xs, n0, end - 1u, warp, lane);
    let buf = (i % 2u) * RB * WG;
    for (var r = 0u; r < RB; r = r + 1u) { red[buf + r * WG + lid] = acc[r]; }
    workgroupBarrier();
    for (var h = LANES / 2u; h > 0u; h = h >> 1u) {
      if (lane < h) {
        for (var r = 0u; r < RB; r = r + 1u) { red[buf + r * WG + lid] = red[buf + r * WG + lid] + red[buf + r * WG + lid + h]; }
      }
      workgroupBarrier();
    }
    if (lid < RB && n0 + lid < end) {
      var s = 0.0;
      for (var v = 0u; v < WARPS; v = v + 1u) { s = s + red[buf + lid * WG + v * LANES]; }
      y[g.x * params.n + n0 + lid] = s;
    }
  }
}
