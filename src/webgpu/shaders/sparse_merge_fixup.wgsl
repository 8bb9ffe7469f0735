// Fix-up pass of the merge-path SpMM (sparse_merge.wgsl): one invocation per workgroup and
// dense column; the first workgroup of a run carrying one row adds the run's partial sums to
// that row's output (written by the workgroup where the row ends).
#include "sparse_common"

struct Params {
  rows: u32, nnz: u32, n: u32, y_off: u32,
  ip_off: u32, ix_off: u32, v_off: u32, b_off: u32,
  bs0: u32, bs1: u32, groups: u32, pad0: u32,
}

@group(0) @binding(0) var<storage, read> carry: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> p: Params;

#include "sparse_store"

const NONE: u32 = 0xffffffffu;

fn carry_row(w: u32) -> u32 { return carry[2u * (p.groups + 1u) + w]; }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * nwg.x * 256u;
  let w = g / p.n;
  let c = g % p.n;
  if (w >= p.groups) { return; }
  let r = carry_row(w);
  if (r == NONE || (w > 0u && carry_row(w - 1u) == r)) { return; }
  var sum = 0.0;
  for (var v = w; v < p.groups && carry_row(v) == r; v++) {
    sum += bitcast<f32>(carry[3u * p.groups + 2u + v * p.n + c]);
  }
  add_to(p.y_off + r * p.n + c, sum);
}
