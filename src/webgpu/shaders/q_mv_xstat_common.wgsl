// Shared part of the x-stationary quantized matvec (y = x W^T, M <= 4; W packed GGUF blocks).
// The streaming matvec (q_mv_stream_common) gives each warp a few rows and walks all of K,
// loading each lane's x slice again on every step for only ROWS rows. Here x stays in
// registers instead: a step is LANES / SLOTS consecutive blocks of a row (what one warp of the
// streaming kernel reads per loop trip), warp w owns steps w, w + WARPS, w + 2 * WARPS, ...
// (STEPS of them at most), and each lane loads its x slices of those steps once (the format's
// lane_x). The workgroup then sweeps GROUP_ROWS rows, RB rows per batch: each lane dots its
// slices against the same steps of the RB rows (lane_dot), the RB sums are reduced over the
// workgroup (the variant's main) and stored. x traffic per workgroup is one row of x for
// GROUP_ROWS weight rows.
// Only for nsteps <= WARPS * STEPS (the launcher checks; the streaming kernel runs otherwise).
// NB (blocks per row) is a define, so the step counts, the validity tests below and the row
// stride are constants: the step loops have constant trip counts and fold for full steps.
// Defines: QCONST, LANE (q*_lane: SLOTS, struct LaneX, lane_x, lane_dot), WARPS, GROUP_ROWS,
// RB (rows per batch), NB. Bindings: x (as vec4; K is a multiple of 32), w, y, params.
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
const WARPS: u32 = {{WARPS}}u;
const WG: u32 = LANES * WARPS;
const GROUP_ROWS: u32 = {{GROUP_ROWS}}u;
const RB: u32 = {{RB}}u;
const NBATCH: u32 = (GROUP_ROWS + RB - 1u) / RB;
const NB: u32 = {{NB}}u;

// The q*_lane parts load x through xload (the streaming kernel's may transform it).
fn xload(i: u32) -> vec4<f32> { return x[i]; }

#include "{{LANE}}"

const STRIDE: u32 = LANES / SLOTS;                  // blocks per step
const NSTEPS: u32 = (NB + STRIDE - 1u) / STRIDE;    // steps per row, the last maybe partial
const STEPS: u32 = (NSTEPS + WARPS - 1u) / WARPS;   // steps of warp 0 (the most any warp has)
const FULL: u32 = NSTEPS / WARPS;                   // steps that every warp has
const ROW_BYTES: u32 = NB * Q_BLOCK_BYTES;
// Per-batch partial sums, two buffers used by alternate batches: a batch's writes land in the
// buffer whose reads (two batches back) finished before the previous batch's barrier, so one
// barrier per batch suffices. red[buf * RB * WG + r * WG + lid].
var<workgroup> red: array<f32, 2u * RB * WG>;

// (m, first weight row of the workgroup); m == params.m for a workgroup past the end.
// Depends on the workgroup id only, so branches on it stay workgroup-uniform.
fn row_group(wid: vec3<u32>, nwg: vec3<u32>) -> vec2<u32> {
  let groups_per_m = (params.n + GROUP_ROWS - 1u) / GROUP_ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= params.m * groups_per_m) { return vec2<u32>(params.m, 0u); }
  return vec2<u32>(g / groups_per_m, (g % groups_per_m) * GROUP_ROWS);
}

// This lane's x slices of x row m for each of its warp's steps. Blocks past NB (the partial
// last step, or a step the warp does not have) load the last block: in bounds, never used.
fn load_xs(m: u32, warp: u32, lane: u32) -> array<LaneX, STEPS> {
  var xs: array<LaneX, STEPS>;
  let x4 = m * (NB * QK / 4u);
  for (var s = 0u; s < STEPS; s = s + 1u) {
    let b = (warp + s * WARPS) * STRIDE + lane / SLOTS;
    xs[s] = lane_x(x4, min(b, NB - 1u), lane % SLOTS);
  }
  return xs;
}

// This lane's parts of the dot products of rows n0 .. n0 + RB - 1 with its x slices; rows
// past `last` repeat row `last` (in-bounds loads, sums never stored), so the inner loop has
// no per-row branch. A step the warp does not have is skipped (warp-uniform branch, constant
// true for s < FULL); lanes past NB in the partial last step read the last block and add 0.
fn batch_partials(xs: ptr<function, array<LaneX, STEPS>>, n0: u32, last: u32, warp: u32, lane: u32) -> array<f32, RB> {
  var acc: array<f32, RB>;
  var ro: array<u32, RB>;
  for (var r = 0u; r < RB; r = r + 1u) { ro[r] = min(n0 + r, last) * ROW_BYTES; }
  let part = lane % SLOTS;
  for (var s = 0u; s < STEPS; s = s + 1u) {
    let st = warp + s * WARPS;
    if (s < FULL || st < NSTEPS) {
      let b = st * STRIDE + lane / SLOTS;
      let ok = NB % STRIDE == 0u || b < NB;
      let bo = min(b, NB - 1u) * Q_BLOCK_BYTES;
      for (var r = 0u; r < RB; r = r + 1u) {
        let v = lane_dot(ro[r] + bo, part, (*xs)[s]);
        acc[r] = acc[r] + select(0.0, v, ok);
      }
    }
  }
  return acc;
}

// The whole kernel but the reduction: load x once, then per batch of RB rows the lane's
// partial sums, which the variant's fn reduce_store(acc, buf, n_rows, lid, lane, sub) reduces
// over the workgroup and stores as y[y0 + r] for r < n_rows (buf: the batch's half of red;
// sub: the variant's subgroup id and size, unused by the tree variant).
fn sweep(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, sub: vec2<u32>) {
  let g = row_group(wid, nwg);
  if (g.x >= params.m) { return; }  // uniform per workgroup
  let warp = lid / LANES;
  let lane = lid % LANES;
  var xs = load_xs(g.x, warp, lane);
  let end = min(g.y + GROUP_ROWS, params.n);  // this workgroup's rows: g.y .. end - 1
  for (var i = 0u; i < NBATCH; i = i + 1u) {
    let n0 = g.y + i * RB;
    if (n0 >= end) { break; }  // uniform per workgroup
    let acc = batch_partials(&xs, n0, end - 1u, warp, lane);
    reduce_store(acc, (i % 2u) * RB * WG, g.x * params.n + n0, min(RB, end - n0), lid, lane, sub);
  }
}

