// Streaming quantized matvec, workgroup-memory reduction (any device; the subgroup variant
// is q_mv_stream_sg). See q_mv_stream_common for the work split. Each warp's 32 lanes sit in
// their own 32-slot segment of each row's slice of `red`, so all WARPS * ROWS rows reduce
// together in log2(32) steps; lane r of a warp then stores row r.
#include "q_mv_stream_common"

// One row group's sums (g: its (m, first row); prev_m: the x row of the workgroup's previous
// pass, params.m in the first).
fn run_group(g: vec2<u32>, prev_m: u32, lid: u32) {
  let warp = lid / LANES;
  let lane = lid % LANES;
  let rows = warp_rows(g.y, warp);
  xrow = g.x * (params.k / 4u);
  // Called by every invocation, rows or not: the staged source has barriers inside.
  let acc = warp_partials(g.x, rows.x, rows.y, lane, warp, prev_m);
  for (var r = 0u; r < NR; r = r + 1u) { red[r * WG + lid] = lane_sum(acc, r); }
  workgroupBarrier();
  for (var h = LANES / 2u; h > 0u; h = h >> 1u) {
    if (lane < h) {
      for (var r = 0u; r < NR; r = r + 1u) { red[r * WG + lid] = red[r * WG + lid] + red[r * WG + lid + h]; }
    }
    workgroupBarrier();
  }
  // The first warp of each KSPLIT set adds the set's sums (the ssq is every warp's own).
  if (warp % KSPLIT == 0u && lane < rows.y) {
    let sc = out_scale(red[(NR - 1u) * WG + warp * LANES]);
    var s = 0.0;
    for (var j = 0u; j < KSPLIT; j = j + 1u) { s = s + red[lane * WG + (warp + j) * LANES]; }
    let i = g.x * params.n + rows.x + lane;
    y[i] = out_value(s * sc, i);
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  for (var p = 0u; p < PASSES; p = p + 1u) {
    let g = row_group(group_index(wid, nwg, p));
    if (g.x >= params.m) { return; }  // uniform per workgroup
    if (p > 0u) { workgroupBarrier(); }  // the previous pass is done with red
    let prev_m = select(params.m, row_group(group_index(wid, nwg, max(p, 1u) - 1u)).x, p > 0u);
    run_group(g, prev_m, lid);
  }
}
