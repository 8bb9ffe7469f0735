// Streaming quantized matvec, workgroup-memory reduction (any device; the subgroup variant
// is q_mv_stream_sg). See q_mv_stream_common for the work split. Each warp's 32 lanes sit in
// their own 32-slot segment of each row's slice of `red`, so all WARPS * ROWS rows reduce
// together in log2(32) steps; lane r of a warp then stores row r.
#include "q_mv_stream_common"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = row_group(wid, nwg);
  if (g.x >= p.m) { return; }  // uniform per workgroup
  let warp = lid / LANES;
  let lane = lid % LANES;
  let rows = warp_rows(g.y, warp);
  xrow = g.x * (p.k / 4u);
  // Called by every invocation, rows or not: a source may have barriers inside.
  let acc = warp_partials(g.x, rows.x, rows.y, lane, warp);
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
    let i = g.x * p.n + rows.x + lane;
    y[i] = out_value(s * sc, i);
  }
}
