// Shared part of the quantized matvec shaders (y = x W^T for small M, W packed GGUF blocks
// read as array<u32>): bindings, params, and the accumulation of one workgroup = (x row m,
// group of ROWS weight rows). Thread lid streams work items lid, lid + WG, ... of the rows,
// so neighbouring threads read neighbouring blocks; x values are loaded once per item and
// reused for all ROWS weight rows. The entry shader (q_matvec / q_matvec_sg) reduces `acc`.
// Defines: QCONST, ROWS, DOT (the format's q*_dot shader: ITEMS_PER_BLOCK and
// fn item_dot(row_base0, x_base, item, nrows) accumulating into acc[0..nrows-1]).
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

fn x4(i: u32) -> vec4<f32> {
  return vec4<f32>(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
}

#include "{{DOT}}"

// (m, first weight row, rows in this group); m == params.m for a workgroup past the end.
fn row_group(wid: vec3<u32>, nwg: vec3<u32>) -> vec3<u32> {
  let groups_per_m = (params.n + ROWS - 1u) / ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= params.m * groups_per_m) { return vec3<u32>(params.m, 0u, 0u); }
  let n0 = (g % groups_per_m) * ROWS;
  return vec3<u32>(g / groups_per_m, n0, min(ROWS, params.n - n0));
}

fn accumulate(m: u32, n0: u32, nrows: u32, lid: u32) {
  let items = (params.k / QK) * ITEMS_PER_BLOCK;
  for (var r = 0u; r < ROWS; r = r + 1u) { acc[r] = 0.0; }
  for (var i = lid; i < items; i = i + WG) {
    item_dot(n0 * params.row_bytes, m * params.k, i, nrows);
  }
}
