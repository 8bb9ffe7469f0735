// out += A for a CSR matrix A over a dense out (already holding the dense operand), one
// invocation per row walking its entries in order (duplicates add one after the other).
// 16-bit values: the last element of a row may share its word with the next row's first,
// which add_to (sparse_store) leaves intact.
#include "sparse_common"

struct Params {
  rows: u32, cols: u32, y_off: u32, ip_off: u32,
  ix_off: u32, v_off: u32, pad0: u32, pad1: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> vals: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> p: Params;

#include "sparse_store"

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = gid.x + gid.y * nwg.x * 256u;
  if (r >= p.rows) { return; }
  let k1 = indptr[IW * (p.ip_off + r + 1u)];
  for (var k = indptr[IW * (p.ip_off + r)]; k < k1; k++) {
    let ve = p.v_off + k;
    add_to(p.y_off + r * p.cols + indices[IW * (p.ix_off + k)], val_of(vals[word_of(ve)], ve));
  }
}
