// Shared part of the quantized dequantize shaders: one invocation per work item (a Q8_0
// block, or 64 elements of a K-quant super-block) writing its f32 values. The including
// shader (q*_items) defines ITEMS_PER_BLOCK and fn item_store(row_base, out_base, item).
// Bindings: w, y, params.
struct Params {
  rows: u32,
  cols: u32,
  row_bytes: u32,
  items_per_row: u32,
};
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "q_bytes"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = gid.x + gid.y * nwg.x * 64u;
  if (t >= params.rows * params.items_per_row) { return; }
  let r = t / params.items_per_row;
  let item = t % params.items_per_row;
  item_store(r * params.row_bytes, r * params.cols, item);
}
