// Shared part of the quantized matvec/matmul shaders (y = x W^T, W packed GGUF blocks read
// as array<u32>): bindings, params, and one workgroup per output element reducing over the
// row's work items. The including shader defines ITEMS_PER_BLOCK and
// fn item_dot(row_byte_base, x_base, item) -> f32.
// Bindings: x, w, y, params.
struct Params {
  m: u32,
  n: u32,
  k: u32,
  row_bytes: u32,
};
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

#include "q_bytes"

const WG: u32 = 64u;
var<workgroup> red: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let out_idx = wid.x + wid.y * nwg.x;
  if (out_idx >= params.m * params.n) { return; }  // uniform per workgroup
  let n = out_idx % params.n;
  let m = out_idx / params.n;
  let row_base = n * params.row_bytes;
  let x_base = m * params.k;
  let items = (params.k / QK) * ITEMS_PER_BLOCK;
  var acc = 0.0;
  for (var i = lid; i < items; i = i + WG) {
    acc = acc + item_dot(row_base, x_base, i);
  }
  red[lid] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) { y[out_idx] = red[0]; }
}
