// Shared part of the streaming quantized matvec (y = x W^T, M <= 4; W packed GGUF blocks
// read as array<u32>). One workgroup = (x row m, ROWS weight rows); LANES = 32 invocations
// per weight row. The row's lanes split each block into SLOTS parts (the format's lane
// shader), so one step of the 32 lanes reads LANES / SLOTS neighbouring blocks: a contiguous
// run of the row (coalesced), each lane a few whole u32 words, the block scale decoded once
// per part instead of once per value. x is read as vec4 from global memory: K is unbounded
// and a whole x row can exceed the 16 KiB of workgroup memory WebGPU guarantees; the ROWS
// rows of a workgroup read the same x words, which the read-only cache serves.
// Defines: QCONST, ROWS, UNROLL (blocks per lane per loop trip), LANE (the format's q*_lane shader: SLOTS and
// fn lane_dot(row_off, x4_base, block, part) -> f32).
// Bindings: x (as vec4; K is a multiple of 32), w, y, params.
struct Params {
  m: u32,
  n: u32,
  k: u32,
  row_bytes: u32,
};
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

#include "q_bytes"

const LANES: u32 = 32u;
const ROWS: u32 = {{ROWS}}u;
const WG: u32 = LANES * ROWS;
const UNROLL: u32 = {{UNROLL}}u;
var<workgroup> red: array<f32, WG>;

#include "{{LANE}}"

// (m, first weight row, rows in this group); m == params.m for a workgroup past the end.
fn row_group(wid: vec3<u32>, nwg: vec3<u32>) -> vec3<u32> {
  let groups_per_m = (params.n + ROWS - 1u) / ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= params.m * groups_per_m) { return vec3<u32>(params.m, 0u, 0u); }
  let n0 = (g % groups_per_m) * ROWS;
  return vec3<u32>(g / groups_per_m, n0, min(ROWS, params.n - n0));
}

// This lane's part of row n's dot product with x row m. UNROLL blocks per trip of the main
// loop (a constant trip count the driver can unroll), so that each lane has UNROLL
// independent sets of loads in flight; the tail takes the rest one block at a time.
fn row_partial(m: u32, n: u32, lane: u32) -> f32 {
  let nb = params.k / QK;
  let row_off = n * params.row_bytes;
  let x4 = m * (params.k / 4u);
  let part = lane % SLOTS;
  let stride = LANES / SLOTS;
  var acc = 0.0;
  var b = lane / SLOTS;
  for (; b + (UNROLL - 1u) * stride < nb; b = b + UNROLL * stride) {
    for (var u = 0u; u < UNROLL; u = u + 1u) { acc = acc + lane_dot(row_off, x4, b + u * stride, part); }
  }
  for (; b < nb; b = b + stride) { acc = acc + lane_dot(row_off, x4, b, part); }
  return acc;
}
