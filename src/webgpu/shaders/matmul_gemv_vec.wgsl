// Small-M matmul with K-contiguous B (x @ W^T, M <= 4) streaming B 8 elements per load:
// o[z, m, n] = sum_k A[z, m, k] * B[z, n, k]. Row n of B is read by KS invocations side by side,
// each taking 8 consecutive k per load (one vec4<u32> of packed f16, or two vec4 of f32/f16),
// so a subgroup reads whole cache lines. Each invocation serves RB consecutive rows of B at
// once, so that one read of A (from workgroup memory) feeds RB rows: a workgroup covers
// R * RB rows with R = WG / KS, and the A traffic per byte of B drops by RB. A chunk of KC
// values of every A row is staged in workgroup memory as f32 (any A strides and storage), so
// each invocation's A reads are vec4 from workgroup memory. The launcher guarantees that B's
// offset and row stride are multiples of 8 elements (16-byte aligned vec4<u32>) and that the
// buffer's capacity is a multiple of 16 bytes, so the vec4 holding a row's last elements is in
// the buffer. The K % 8 tail of the last chunk is read one element per invocation.
// Partial sums are reduced per row: with SG by subgroupAdd (a subgroup whose invocations do not
// all share one row falls back to storing its own partials, so nothing assumes how invocations
// map to subgroups), else by a workgroup-memory tree.
// PRO, a prologue on A (attrs.prologue): 0 none; 2 SiluMul (silu_mul_matmul_t): each staged A
// value a becomes silu(a) * g[i + g_off], g being `up` with A's strides (i: A's element index);
// 1 RmsNorm (rms_norm_matmul_t): A is RMS-normalized on the way in. Staging multiplies each A value
// by the norm weight g[k] and accumulates the row's sum of squares (every invocation staging
// part of every chunk, so the sums cover all of K); after the K loop a workgroup reduction
// gives 1 / sqrt(mean(a^2) + eps) per A row, which scales the row's dot products. A f32 only
// (the launcher's condition), so the values equal those of the separate rms_norm up to the
// order of the f32 sums (a sum of squares that overflows is redone scaled: row_rinv).
// EPI_INC, the epilogue: matmul_epi_store (each sum stored) or matmul_epi_rope_append (MR = 1,
// RB even: the invocation keeps its RB sums and hands them over as row pairs (n, n + 1), see
// that file: RoPE of q and k, K and V appended to the KV cache).
// Defines: WG, KS (power of two dividing WG), RB (rows of B per invocation), MR (rows of A,
// = M), KC (multiple of 8), SG (subgroup reduction), PRO, EPI (the rope_append epilogue),
// EPI_FREQS (its freq factors buffer), the storage access of matmul_io.wgsl (A_STORE, B_STORE,
// B_VEC8, O_MODE, FUSE_C, G_BIND, P_BIND) and the epilogue's binding defines
// (src/webgpu/plans/matmul_plan.cpp).
#if A_STORE == 1 || B_STORE == 1
enable f16;
#endif
#if SG
enable subgroups;
#endif

alias CT = f32;  // compute type named by the shared load text (LDA1)

const WG: u32 = {{WG}}u;
const KS: u32 = {{KS}}u;
const R: u32 = WG / KS;
const RB: u32 = {{RB}}u;
const MR: u32 = {{MR}}u;
const KC: u32 = {{KC}}u;
const KC4: u32 = KC / 4u;
const SG: bool = {{SG}};
const PRO: u32 = {{PRO}}u;
const NORM: bool = PRO == 1u;

#include "matmul_io"
#include "norm_scale"

// The addend c (out = A B^T + c, c laid out like the output) or 0.
fn cadd(e: u32) -> f32 {
#if FUSE_C
  return c[e - p.o_off + p.c_off];
#else
  return 0.0;
#endif
}
// The prologue operand's element i (PRO != 0).
fn gld(i: u32) -> f32 {
#if PRO != 0
  return g[i + p.g_off];
#else
  return 1.0;
#endif
}
#if SG
// A subgroup whose invocations all share row r stores its sum in its leader's slot and 0
// elsewhere; any other subgroup stores its invocations' partials.
fn sg_part(v: f32, r: u32, sid: u32) -> f32 {
  let t = subgroupAdd(v);
  let one = subgroupAll(r == subgroupBroadcastFirst(r));
  return select(v, select(0.0, t, sid == 0u), one);
}
#endif
#if EPI
#include "matmul_epi_rope_append"
#else
#include "matmul_epi_store"
#endif

var<workgroup> xs: array<vec4<f32>, MR * KC4>;
var<workgroup> red: array<f32, WG>;
var<workgroup> rinv: array<f32, MR>;  // NORM: 1 / rms of each A row
const NS: u32 = min(WG, 16u);  // NORM: first-level summers (WG is a power of two)
var<workgroup> red2: array<f32, NS>;

// 1 / rms of the A row at arow from its plain sum of squares t. That sum overflows f32 for
// |a| above ~1e19: then (rare, so the staging loop stays as it is) the row's statistics are
// redone here scaled by max|a| (norm_scale), the definition of the standalone rms_norm.
fn row_rinv(t: f32, arow: u32) -> f32 {
  let eps = bitcast<f32>(p.eps_bits);
  if (ssq_finite(t)) { return inverseSqrt(t / f32(p.K) + eps); }
  var mx = 0.0;
  for (var k = 0u; k < p.K; k++) { mx = max(mx, abs(lda1(arow + k * p.a_ks))); }  // NaN: reaches ss
  let scale = rms_scale(mx);
  var ss = 0.0;
  for (var k = 0u; k < p.K; k++) {
    let u = rms_scaled(lda1(arow + k * p.a_ks), scale);
    ss += u * u;
  }
  return rms_inv(ss, f32(p.K), eps, scale);
}

fn out_scale(m: u32) -> f32 {
  if (NORM) { return rinv[m]; }
  return 1.0;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>
#if SG
        , @builtin(subgroup_invocation_id) sid: u32
#endif
        ) {
  let bases = batch_bases(wid.z + p.batch_base);
  let a_base = bases.x;
  let b_base = bases.y;
  let o_base = bases.z;

  let r = lid / KS;
  let s = lid % KS;
  let n0 = (wid.x * R + r) * RB;  // this invocation's rows: n0 .. n0 + RB - 1
  // Rows past N read row N-1 (in range) and drop the result: every invocation stays in the
  // loop, whose barriers need the whole workgroup.
  var brow: array<u32, RB>;
  for (var j = 0u; j < RB; j++) { brow[j] = b_base + min(n0 + j, p.N - 1u) * p.b_ns; }

  var acc: array<f32, MR * RB>;  // acc[m * RB + j]: row m of A with row n0 + j of B
  var ssq: array<f32, MR>;  // NORM: this invocation's part of each A row's sum of squares
  for (var k0 = 0u; k0 < p.K; k0 += KC) {
    let kn = min(KC, p.K - k0);
    workgroupBarrier();  // the previous chunk of A is no longer read
    for (var q = lid; q < MR * KC4; q += WG) {
      let arow = a_base + (q / KC4) * p.a_ms;
      let kq = k0 + (q % KC4) * 4u;
      var v = vec4<f32>();
      for (var j = 0u; j < 4u; j++) {
        if (kq + j < p.K) {
          let ai = arow + (kq + j) * p.a_ks;
          v[j] = lda1(ai);
          if (PRO == 2u) { v[j] = v[j] / (1.0 + exp(-v[j])) * gld(ai); }
        }
      }
      if (NORM) {
        let sq = dot(v, v);
        for (var m = 0u; m < MR; m++) {  // constant indices: ssq stays in registers
          if (q / KC4 == m) { ssq[m] += sq; }
        }
        var gv = vec4<f32>();
        for (var j = 0u; j < 4u; j++) {
          if (kq + j < p.K) { gv[j] = gld(kq + j); }
        }
        v *= gv;
      }
      xs[q] = v;
    }
    workgroupBarrier();

    let k8 = kn & ~7u;  // whole groups of 8 in this chunk
    var kk = s * 8u;
    // Two independent loads per row and step keep more reads of B in flight.
    for (; kk + 8u * KS < k8; kk += 16u * KS) {
      var b0: array<array<vec4<f32>, 2>, RB>;
      var b1: array<array<vec4<f32>, 2>, RB>;
      for (var j = 0u; j < RB; j++) {
        b0[j] = ldb8(brow[j] + k0 + kk);
        b1[j] = ldb8(brow[j] + k0 + kk + 8u * KS);
      }
      for (var m = 0u; m < MR; m++) {
        let x = m * KC4 + kk / 4u;
        let y = x + 2u * KS;
        let x0 = xs[x];
        let x1 = xs[x + 1u];
        let y0 = xs[y];
        let y1 = xs[y + 1u];
        for (var j = 0u; j < RB; j++) {
          acc[m * RB + j] += dot(x0, b0[j][0]) + dot(x1, b0[j][1]) + dot(y0, b1[j][0]) + dot(y1, b1[j][1]);
        }
      }
    }
    if (kk < k8) {
      var b0: array<array<vec4<f32>, 2>, RB>;
      for (var j = 0u; j < RB; j++) { b0[j] = ldb8(brow[j] + k0 + kk); }
      for (var m = 0u; m < MR; m++) {
        let x = m * KC4 + kk / 4u;
        let x0 = xs[x];
        let x1 = xs[x + 1u];
        for (var j = 0u; j < RB; j++) { acc[m * RB + j] += dot(x0, b0[j][0]) + dot(x1, b0[j][1]); }
      }
    }
    if (s < kn - k8) {  // K % 8 tail, last chunk only
      let kt = k8 + s;
      for (var j = 0u; j < RB; j++) {
        let bv = ldb1(brow[j] + k0 + kt);
        for (var m = 0u; m < MR; m++) { acc[m * RB + j] += xs[m * KC4 + kt / 4u][kt % 4u] * bv; }
      }
    }
  }

  if (NORM) {  // each A row's sum of squares over the workgroup, then 1 / rms into rinv
    // Two levels, three barriers per row: NS invocations each add WG / NS partials, then the
    // first NS invocations' sums are added (the same order in every workgroup).
    for (var m = 0u; m < MR; m++) {
      workgroupBarrier();
      red[lid] = ssq[m];
      workgroupBarrier();
      if (lid < NS) {
        var t = 0.0;
        for (var j = 0u; j < WG / NS; j++) { t += red[lid * (WG / NS) + j]; }
        red2[lid] = t;
      }
      workgroupBarrier();
      if (lid == 0u) {
        var t = 0.0;
        for (var j = 0u; j < NS; j++) { t += red2[j]; }
        rinv[m] = row_rinv(t, a_base + m * p.a_ms);
      }
    }
    workgroupBarrier();
  }

  // One (m, j) sum at a time through red: red[r*KS + s] holds invocation (r, s)'s partial.
  var ev: array<f32, RB>;  // EPI (MR = 1): row n0 + j's result, for the epilogue
  for (var mj = 0u; mj < MR * RB; mj++) {
    let m = mj / RB;
    let n = n0 + mj % RB;
    let v = acc[mj];
    workgroupBarrier();  // the previous sum's reads of red are done
#if SG
    red[lid] = sg_part(v, r, sid);
#else
    red[lid] = v;
#endif
    workgroupBarrier();
    if (SG) {
      if (s == 0u && n < p.N) {
        var t = 0.0;
        for (var j = 0u; j < KS; j++) { t += red[lid + j]; }
        let e = o_base + m * p.o_rs + n;
        let y = t * out_scale(m) + cadd(e);
        if (EPI) { ev[mj % RB] = y; } else { st1(e, y); }
      }
    } else {
      for (var w = KS / 2u; w > 0u; w /= 2u) {
        if (s < w) { red[lid] += red[lid + w]; }
        workgroupBarrier();
      }
      if (s == 0u && n < p.N) {
        let e = o_base + m * p.o_rs + n;
        let y = red[lid] * out_scale(m) + cadd(e);
        if (EPI) { ev[mj % RB] = y; } else { st1(e, y); }
      }
    }
  }
  if (EPI && s == 0u) {
    for (var j = 0u; j < RB; j += 2u) {
      if (n0 + j < p.N) { epi_pair(o_base, n0 + j, ev[j], ev[j + 1u]); }
    }
  }
}
