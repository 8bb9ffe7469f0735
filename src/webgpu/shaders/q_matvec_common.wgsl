// Shared part of the quantized matvec/matmul shaders (y = x W^T, W packed GGUF blocks read
// as array<u32>): bindings, params, and one workgroup per (x row m, group of ROWS weight
// rows). Each thread walks the row group's work items; x values are loaded once per item
// and reused for all ROWS weight rows (x traffic, not weight traffic, dominates otherwise).
// The including shader defines ITEMS_PER_BLOCK and
// fn item_dot(row_base0, x_base, item, nrows) accumulating into `acc` for rows 0..nrows-1.
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
const ROWS: u32 = {{ROWS}}u;
var<workgroup> red: array<f32, 64 * {{ROWS}}>;
var<private> acc: array<f32, {{ROWS}}>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let groups_per_m = (params.n + ROWS - 1u) / ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= params.m * groups_per_m) { return; }  // uniform per workgroup
  let n0 = (g % groups_per_m) * ROWS;
  let m = g / groups_per_m;
  let nrows = min(ROWS, params.n - n0);
  let x_base = m * params.k;
  let items = (params.k / QK) * ITEMS_PER_BLOCK;
  for (var r = 0u; r < ROWS; r = r + 1u) { acc[r] = 0.0; }
  for (var i = lid; i < items; i = i + WG) {
    item_dot(n0 * params.row_bytes, x_base, i, nrows);
  }
  for (var r = 0u; r < ROWS; r = r + 1u) { red[r * WG + lid] = acc[r]; }
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      for (var r = 0u; r < ROWS; r = r + 1u) { red[r * WG + lid] = red[r * WG + lid] + red[r * WG + lid + s]; }
    }
    workgroupBarrier();
  }
  if (lid < nrows) { y[m * params.n + n0 + lid] = red[lid * WG]; }
}
