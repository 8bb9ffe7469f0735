// Sampled dense-dense product: out[k] = sum_t x[r, t] * y[t, c] for each stored entry k at
// (r, c), one invocation per entry; the entry's row is found by binary search in indptr
// (the last row whose start is <= k). x and y are read through their strides.
#include "sparse_common"

struct Params {
  nnz: u32, rows: u32, kdim: u32, y_off: u32,
  ip_off: u32, ix_off: u32, x_off: u32, w_off: u32,
  xs0: u32, xs1: u32, ws0: u32, ws1: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<u32>;
@group(0) @binding(3) var<storage, read> w: array<u32>;
@group(0) @binding(4) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(5) var<uniform> p: Params;

#include "sparse_store"

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = gid.x + gid.y * nwg.x * 256u;
  if (k >= p.nnz) { return; }
  var lo = 0u;
  var hi = p.rows;  // invariant: indptr[lo] <= k < indptr[hi]
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (indptr[IW * (p.ip_off + mid)] <= k) { lo = mid; } else { hi = mid; }
  }
  let c = indices[IW * (p.ix_off + k)];
  var acc = 0.0;
  for (var t = 0u; t < p.kdim; t++) {
    let xe = p.x_off + lo * p.xs0 + t * p.xs1;
    let we = p.w_off + t * p.ws0 + c * p.ws1;
    acc += val_of(x[word_of(xe)], xe) * val_of(w[word_of(we)], we);
  }
  store(p.y_off + k, acc);
}
