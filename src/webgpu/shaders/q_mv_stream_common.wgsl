// Shared part of the streaming quantized matvec (y = x W^T, M <= 4; W packed GGUF blocks).
// One workgroup = (x row m, WARPS * ROWS weight rows); each warp of
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
// Where the weight bytes come from is the SOURCE part: q_mv_stream_direct (lanes read the
// global `w: array<u32>` themselves) or q_mv_stream_staged (each warp copies its rows' bytes
// of a loop trip into workgroup memory with vec4 loads first). Both declare `w` (the array
// the q_bytes helpers and lane_dot read) and fn warp_partials(m, n0, cnt, lane, warp), which
// every invocation of the workgroup calls (cnt == 0 for a warp without rows), so that the
// staged variant's barriers sit in uniform control flow.
// Defines: QCONST, ROWS (rows per warp), WARPS (warps per workgroup), UNROLL (blocks per lane
// per loop trip), LANE (the format's q*_lane shader: SLOTS, struct LaneX,
// fn lane_x(x4_base, block, part) -> LaneX and fn lane_dot(block_byte_off, part, LaneX) -> f32),
// SOURCE (q_mv_stream_direct or q_mv_stream_staged, which may need defines of its own).
// Bindings: x (as vec4; K is a multiple of 32), the weights (binding 1, declared by SOURCE),
// y, params.
struct Params {
  m: u32,
  n: u32,
  k: u32,
  row_bytes: u32,
};
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
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

#include "{{SOURCE}}"
