// Partition pass of the merge-path SpMM (sparse_merge.wgsl): the merge-path coordinate of
// workgroup boundary g (diagonal g * D of the merged list of row ends and entries), one
// invocation per boundary, into carry[2 g] (row) and carry[2 g + 1] (entry).
const IW: u32 = {{IW}}u;
const D: u32 = {{D}}u;

struct Params {
  rows: u32, nnz: u32, n: u32, y_off: u32,
  ip_off: u32, ix_off: u32, v_off: u32, b_off: u32,
  bs0: u32, bs1: u32, groups: u32, pad0: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read_write> carry: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

fn row_end(r: u32) -> u32 { return indptr[IW * (p.ip_off + r + 1u)]; }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * nwg.x * 256u;
  if (g > p.groups) { return; }
  let d = min(g * D, p.rows + p.nnz);
  // The first row x whose end comes after entry d - x - 1: rows before x are complete and
  // the entries before d - x consumed.
  var lo = select(0u, d - p.nnz, d > p.nnz);
  var hi = min(d, p.rows);
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (row_end(mid) <= d - mid - 1u) { lo = mid + 1u; } else { hi = mid; }
  }
  carry[2u * g] = lo;
  carry[2u * g + 1u] = d - lo;
}
