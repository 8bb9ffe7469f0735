// Shared part of the quantized embedding lookup (get_rows): one invocation per work item of
// each requested row, y[i, :] = dequantize(w[ids[i], :]). The including shader (q*_items)
// defines ITEMS_PER_BLOCK and fn item_store(row_base, out_base, item). Ids are checked on
// the host when they live there; a device id outside [0, rows) yields a NaN row.
// Bindings: w, ids, y, params.
struct Params {
  n_ids: u32,
  cols: u32,
  row_bytes: u32,
  items_per_row: u32,
  rows: u32,
  nan_bits: u32,  // 0x7fc00000 from the host: a NaN constant would be a WGSL const-eval error
  pad1: u32,
  pad2: u32,
};
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

#include "q_bytes"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = gid.x + gid.y * nwg.x * 64u;
  if (t >= params.n_ids * params.items_per_row) { return; }
  let i = t / params.items_per_row;
  let item = t % params.items_per_row;
  let id = ids[i];
  if (id < 0 || u32(id) >= params.rows) {
    let per_item = params.cols / params.items_per_row;
    let nan = bitcast<f32>(params.nan_bits);
    for (var e = 0u; e < per_item; e = e + 1u) { y[i * params.cols + item * per_item + e] = nan; }
    return;
  }
  item_store(u32(id) * params.row_bytes, i * params.cols, item);
}
