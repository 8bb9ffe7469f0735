// Shared part of the streaming quantized matvec (y = x W^T, M <= 4; W packed GGUF blocks
// read as array<u32>). One workgroup = (x row m, WARPS * ROWS weight rows); each warp of
// LANES = 32 invocations owns ROWS consecutive rows, and each of its lanes computes a part of
// all ROWS dot products at once: per step it loads its x slice once into registers (the
// format's lane_x) and dots it against the same bytes of each of its ROWS rows (lane_dot).
// Why: a lane reads only 8-16 weight bytes per row and step but 32-64 bytes of f32 x, so with
// one row per lane the kernel was bound by x loads from L1, not by HBM; ROWS rows per lane
// divide the x traffic by ROWS.
// The lanes split each block into SLOTS parts, so one step of the 32 lanes reads LANES / SLOTS
// neighbouring blocks of each row: a contiguous run (coalesced), each lane a few whole u32
// words, block scales decoded once per part instead of once per value. x is read as vec4
// from global memory: K is unbounded and a whole x row can exceed the 16 KiB of workgroup
// memory WebGPU guarantees.
// Defines: QCONST, ROWS (rows per warp), WARPS (warps per workgroup), UNROLL (blocks per lane
// per loop trip), LANE (the format's q*_lane shader: SLOTS, struct LaneX,
// fn lane_x(x4_base, block, part) -> LaneX and fn lane_dot(block_byte_off, part, LaneX) -> f32).
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
const WARPS: u32 = {{WARPS}}u;
const WG: u32 = LANES * WARPS;
const GROUP_ROWS: u32 = ROWS * WARPS;
const UNROLL: u32 = {{UNROLL}}u;
// One partial sum per (row r, invocation), row-major: red[r * WG + lid].
var<workgroup> red: array<f32, ROWS * WG>;

#include "{{LANE}}"

// (m, first weight row of the workgroup); m == params.m for a workgroup past the end.
// Depends on the workgroup id only, so branches on it stay workgroup-uniform.
fn row_group(wid: vec3<u32>, nwg: vec3<u32>) -> vec2<u32> {
  let groups_per_m = (params.n + GROUP_ROWS - 1u) / GROUP_ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= params.m * groups_per_m) { return vec2<u32>(params.m, 0u); }
  return vec2<u32>(g / groups_per_m, (g % groups_per_m) * GROUP_ROWS);
}

// Rows n0 .. n0 + cnt - 1 (cnt in 1..ROWS) that this warp owns.
fn warp_rows(n0_group: u32, warp: u32) -> vec2<u32> {
  let n0 = n0_group + warp * ROWS;
  if (n0 >= params.n) { return vec2<u32>(n0, 0u); }
  return vec2<u32>(n0, min(ROWS, params.n - n0));
}

// Adds this lane's part of block b of every row to acc. Rows past cnt repeat the last
// valid row (ro below): their loads stay in bounds and their sums are never stored, so the
// inner loop has a constant trip count and no per-row branch.
fn add_block(acc: ptr<function, array<f32, ROWS>>, ro: ptr<function, array<u32, ROWS>>, x4: u32, b: u32, part: u32) {
  let xv = lane_x(x4, b, part);
  let bo = b * Q_BLOCK_BYTES;
  for (var r = 0u; r < ROWS; r = r + 1u) { (*acc)[r] = (*acc)[r] + lane_dot((*ro)[r] + bo, part, xv); }
}

// This lane's parts of the dot products of rows n0 .. n0 + cnt - 1 with x row m. UNROLL
// blocks per trip of the main loop (a constant trip count the driver can unroll), so each
// lane has UNROLL * ROWS independent sets of weight loads in flight; the tail takes the rest
// one block at a time.
fn warp_partials(m: u32, n0: u32, cnt: u32, lane: u32) -> array<f32, ROWS> {
  let nb = params.k / QK;
  var ro: array<u32, ROWS>;
  for (var r = 0u; r < ROWS; r = r + 1u) { ro[r] = (n0 + min(r, cnt - 1u)) * params.row_bytes; }
  let x4 = m * (params.k / 4u);
  let part = lane % SLOTS;
  let stride = LANES / SLOTS;
  var acc: array<f32, ROWS>;
  var b = lane / SLOTS;
  for (; b + (UNROLL - 1u) * stride < nb; b = b + UNROLL * stride) {
    for (var u = 0u; u < UNROLL; u = u + 1u) { add_block(&acc, &ro, x4, b + u * stride, part); }
  }
  for (; b < nb; b = b + stride) { add_block(&acc, &ro, x4, b, part); }
  return acc;
}
