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
// Where the weight bytes come from is the source part: q_mv_stream_direct (lanes read the
// global `w: array<u32>` themselves; f32 x) or, with I8, q_mv_stream_i8 (x quantized to 8 bits;
// there the format's i8 part declares the weights). Each declares
// fn warp_partials(m, n0, cnt, lane, warp), which every invocation of the workgroup calls
// (cnt == 0 for a warp without rows), so that a source may place barriers in it.
// Defines: QCONST, ROWS (rows per warp), WARPS (warps per workgroup), KSPLIT (warps per set of
// rows), UNROLL (blocks per lane per loop trip), LANE (the format's q*_lane or, with I8, q*_i8
// shader: SLOTS, struct LaneX, fn lane_x(x4_base, block, part) -> LaneX and
// fn lane_dot(block_byte_off, part, LaneX) -> f32), I8 (and then q_mv_stream_i8's own defines).
// Bindings: x (as vec4; K is a multiple of 32), the weights (binding 1, declared by the source),
// y[, g][, cadd], params (P_BIND).
// NORM (rms_norm_qmatmul_t): x is RMS-normalized on the way in. The lane parts partition each
// block's values, so every x value of a row is loaded (xload) by exactly one lane of each warp:
// xload multiplies it by the norm weight g and adds its square to the lane's ssq, the ssq of a
// warp's lanes are reduced along with the row sums, and the stored sums are scaled by
// 1 / sqrt(sum / K + eps) (a sum that overflows f32 is redone scaled: out_scale). Define NORM
// (g as vec4 at binding 3).
// SILU (silu_mul_qmatmul_t): x is the gate and xload returns silu(gate) * up, up bound in g's
// place (binding 3, p.g_off4 its vec4 offset). Define SILU.
// ADD: a residual c added as y is stored (binding C_BIND, after g).
// EPI: RoPE and the KV-cache append in the store (below; q_mv_stream_sg only).
struct Params {
  m: u32,
  n: u32,
  k: u32,
  row_bytes: u32,
  g_off4: u32,    // NORM: g's offset in vec4 units
  eps_bits: u32,  // NORM: eps as f32 bits
  c_off: u32,     // ADD: the addend's element offset
  x_off4: u32,    // x's offset in vec4 units
  // EPI: the rope_append epilogue's fields (matmul_epi_rope_append.wgsl), as in matmul_io.
  r_pos: u32, r_qn: u32, r_kvn: u32, r_hd: u32,
  r_nrot: u32, r_base_log2: f32, r_freq_scale: f32, r_f_off: u32,
};
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding({{P_BIND}}) var<uniform> p: Params;  // 3, + 1 after g, + 1 after cadd

#include "q_bytes"
#include "norm_scale"

const LANES: u32 = 32u;
const ROWS: u32 = {{ROWS}}u;
const WARPS: u32 = {{WARPS}}u;
const WG: u32 = LANES * WARPS;
// KSPLIT warps share each set of ROWS rows, warp w taking the (w % KSPLIT)-th of every KSPLIT
// trips (only the i8 source splits; the others run with 1): each lane's chain of dependent
// trips is KSPLIT times shorter, for KSPLIT times more workgroups of the same size.
const KSPLIT: u32 = {{KSPLIT}}u;
const_assert WARPS % KSPLIT == 0u;
const GROUP_ROWS: u32 = ROWS * (WARPS / KSPLIT);
const UNROLL: u32 = {{UNROLL}}u;
const NORM: bool = {{NORM}};
const SILU: bool = {{SILU}};  // silu_mul prologue (exclusive with NORM)
const_assert !(NORM && SILU);
const NR: u32 = select(ROWS, ROWS + 1u, NORM);  // reduced sums per lane: the rows, then ssq
// One partial sum per (row r, invocation), row-major: red[r * WG + lid].
var<workgroup> red: array<f32, NR * WG>;
#if NORM || SILU
@group(0) @binding(3) var<storage, read> g: array<vec4<f32>>;
fn gload(j: u32) -> vec4<f32> { return g[j]; }
#else
fn gload(j: u32) -> vec4<f32> { return vec4<f32>(1.0); }
#endif
// ADD (addqmm_t): y = x W^T + c, c f32 laid out like y (binding after g), added at the store.
const ADD: bool = {{ADD}};
#if ADD
@group(0) @binding({{C_BIND}}) var<storage, read> cadd: array<f32>;
fn addend(i: u32) -> f32 { return cadd[p.c_off + i]; }
#else
fn addend(i: u32) -> f32 { return 0.0; }
#endif
// EPI (KVCache::rms_norm_qkv_append_rope with a quantized q/k/v weight, M = 1): RoPE and the
// KV-cache append as y is stored, by matmul_epi_rope_append.wgsl (shared with the dense vector
// gemv). The storing lanes of a warp hold consecutive rows from an even one (ROWS even), so
// each even lane and the next hold a rotation pair: q_mv_stream_sg hands the odd lane's value
// to the even one with a subgroup shuffle. Defines: E_BIND, E_BIND1, CACHE_F16, ROPE_FREQS
// (with FREQ_BIND and FREQ_OFF).
#if EPI
fn st1(e: u32, v: f32) { y[e] = v; }
#include "matmul_epi_rope_append"
#else
const EPI: bool = false;
#endif
// The value stored at y[i] for the row sum s (already scaled).
fn out_value(s: f32, i: u32) -> f32 {
  if (ADD) { return s + addend(i); }
  return s;
}

var<private> ssq: f32;   // NORM: this lane's sum of squares of the x values it loaded
var<private> xrow: u32;  // vec4 index of the current x row (g is indexed from it)
fn xload(i: u32) -> vec4<f32> {
  let v = x[p.x_off4 + i];
  if (NORM) {
    ssq = ssq + dot(v, v);
    return v * gload(p.g_off4 + i - xrow);
  }
  // SILU: x is the gate, g is up laid out like x (row m at the same vec4 index): silu(x) * up,
  // the formula of the silu_mul kernel.
  if (SILU) { return v / (vec4<f32>(1.0) + exp(-v)) * gload(p.g_off4 + i); }
  return v;
}
// Sum r (< NR) of this lane: a row's partial, or ssq.
fn lane_sum(acc: array<f32, ROWS>, r: u32) -> f32 {
  return select(ssq, acc[min(r, ROWS - 1u)], r < ROWS);
}
// The factor of a warp's stored sums, from the warp's reduced ssq. A plain sum of squares
// overflows f32 for |x| above ~1e19: then (rare, so the hot loop stays as it is) the storing
// lane redoes its row's statistics scaled by max|x| (norm_scale), the definition of the
// standalone rms_norm.
fn out_scale(sq: f32) -> f32 {
  if (NORM) {
    let eps = bitcast<f32>(p.eps_bits);
    if (ssq_finite(sq)) { return inverseSqrt(sq / f32(p.k) + eps); }
    let b = p.x_off4 + xrow;
    var mx = 0.0;
    for (var j = 0u; j < p.k / 4u; j = j + 1u) {
      let a = abs(x[b + j]);
      mx = max(mx, max(max(a.x, a.y), max(a.z, a.w)));  // a NaN here still reaches ss below
    }
    let scale = rms_scale(mx);
    var ss = 0.0;
    for (var j = 0u; j < p.k / 4u; j = j + 1u) {
      let v = x[b + j];
      let u = vec4<f32>(rms_scaled(v.x, scale), rms_scaled(v.y, scale), rms_scaled(v.z, scale), rms_scaled(v.w, scale));
      ss = ss + dot(u, u);
    }
    return rms_inv(ss, f32(p.k), eps, scale);
  }
  return 1.0;
}

#include "{{LANE}}"

// (m, first weight row of the workgroup); m == p.m for a workgroup past the end.
// Depends on the workgroup id only, so branches on it stay workgroup-uniform.
fn row_group(wid: vec3<u32>, nwg: vec3<u32>) -> vec2<u32> {
  let groups_per_m = (p.n + GROUP_ROWS - 1u) / GROUP_ROWS;
  let g = wid.x + wid.y * nwg.x;
  if (g >= p.m * groups_per_m) { return vec2<u32>(p.m, 0u); }
  return vec2<u32>(g / groups_per_m, (g % groups_per_m) * GROUP_ROWS);
}

// Rows n0 .. n0 + cnt - 1 (cnt in 1..ROWS) that this warp owns.
fn warp_rows(n0_group: u32, warp: u32) -> vec2<u32> {
  let n0 = n0_group + (warp / KSPLIT) * ROWS;
  if (n0 >= p.n) { return vec2<u32>(n0, 0u); }
  return vec2<u32>(n0, min(ROWS, p.n - n0));
}

#if I8
#include "q_mv_stream_i8"
#else
#include "q_mv_stream_direct"
#endif
