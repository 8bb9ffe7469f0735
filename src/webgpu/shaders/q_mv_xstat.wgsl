// x-stationary quantized matvec, workgroup-memory reduction (any device; the subgroup variant
// is q_mv_xstat_sg). See q_mv_xstat_common. Per batch: every lane stores its RB sums, each
// warp sums its 32-slot segments in log2(32) steps, then invocation r < RB adds the WARPS
// warp sums of row r and stores y.
#include "q_mv_xstat_common"

fn reduce_store(acc: array<f32, RB>, buf: u32, y0: u32, n_rows: u32, lid: u32, lane: u32, sub: vec2<u32>) {
  for (var r = 0u; r < RB; r = r + 1u) { red[buf + r * WG + lid] = acc[r]; }
  workgroupBarrier();
  for (var h = LANES / 2u; h > 0u; h = h >> 1u) {
    if (lane < h) {
      for (var r = 0u; r < RB; r = r + 1u) { red[buf + r * WG + lid] = red[buf + r * WG + lid] + red[buf + r * WG + lid + h]; }
    }
    workgroupBarrier();
  }
  if (lid < n_rows) {
    var s = 0.0;
    for (var v = 0u; v < WARPS; v = v + 1u) { s = s + red[buf + lid * WG + v * LANES]; }
    y[y0 + lid] = s;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  sweep(wid, nwg, lid, vec2<u32>(0u, 1u));
}
