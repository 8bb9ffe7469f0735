// Register-blocked tiled complex64 matmul: o[z, m, n] = sum_k A[z, m, k] * B[z, k, n] on
// interleaved (re, im) f32 pairs (launcher: kernels/complex.cpp, plan: plans/complex_plan.cpp).
// The structure of matmul_tiled.wgsl: one workgroup per BM x BN output tile, TM x TN outputs per
// invocation in registers, K walked in BK chunks staged in workgroup memory (double-buffered:
// one barrier per chunk), operands read through element strides (transposed views need no
// copy). The stages hold the real and imaginary parts as separate K-major planes, so the inner
// loop reads vec4 of parts and does plain f32 fma.
// Defines: BM BN BK TM TN (TM, TN multiples of 4), A_KFAST, B_KFAST (the operand's K stride is
// the unit one: picks the coalescing fetch order), THREE: 0 four real products per complex one;
// 1 Gauss's three, t1 = ar br, t2 = ai bi, t3 = (ar + ai)(br + bi), re = t1 - t2,
// im = t3 - t1 - t2 (the sums are formed once per staged element).
struct Params {
  M: u32, N: u32, K: u32, batch_base: u32,
  a_off: u32, a_ms: u32, a_ks: u32, o_off: u32,
  b_off: u32, b_ks: u32, b_ns: u32, o_rs: u32,
  o_bs: u32, bd1: u32, bd2: u32, pad0: u32,
  a_bs0: u32, a_bs1: u32, a_bs2: u32, pad1: u32,
  b_bs0: u32, b_bs1: u32, b_bs2: u32, pad2: u32,
}
#include "matmul_batch"
@group(0) @binding(0) var<storage, read> a: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> o: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const A_KFAST: bool = {{A_KFAST}};
const B_KFAST: bool = {{B_KFAST}};

const NTX: u32 = BN / TN;
const NTY: u32 = BM / TM;
const NT: u32 = NTX * NTY;
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
// K-major rows padded by one vec4, as in matmul_tiled.wgsl (transposing stores spread over banks).
const AS_STRIDE: u32 = BM / 4u + 1u;
const BS_STRIDE: u32 = BN / 4u + 1u;
const AS_BUF: u32 = BK * AS_STRIDE;
const BS_BUF: u32 = BK * BS_STRIDE;
const LA: u32 = BM * BK / NT;  // elements fetched per invocation per chunk
const LB: u32 = BN * BK / NT;

var<workgroup> Ar: array<vec4<f32>, 2u * AS_BUF>;
var<workgroup> Ai: array<vec4<f32>, 2u * AS_BUF>;
var<workgroup> Br: array<vec4<f32>, 2u * BS_BUF>;
var<workgroup> Bi: array<vec4<f32>, 2u * BS_BUF>;
#if THREE
var<workgroup> As: array<vec4<f32>, 2u * AS_BUF>;
var<workgroup> Bs: array<vec4<f32>, 2u * BS_BUF>;
#endif

// Element (m, k) of the A chunk handled by fetch slot i of invocation lid: neighbouring
// invocations take neighbouring elements along the operand's unit-stride dim.
fn a_slot(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (A_KFAST) { return vec2<u32>(e / BK, e % BK); }
  return vec2<u32>(e % BM, e / BM);
}
fn b_slot(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (B_KFAST) { return vec2<u32>(e / BK, e % BK); }
  return vec2<u32>(e % BN, e / BN);
}

fn fetch_a(lid: u32, base: u32, m0: u32, k0: u32) -> array<vec2<f32>, LA> {
  var r: array<vec2<f32>, LA>;
  for (var i = 0u; i < LA; i++) {
    let s = a_slot(lid, i);
    let m = m0 + s.x;
    let k = k0 + s.y;
    if (m < p.M && k < p.K) { r[i] = a[base + m * p.a_ms + k * p.a_ks]; }
  }
  return r;
}
fn fetch_b(lid: u32, base: u32, n0: u32, k0: u32) -> array<vec2<f32>, LB> {
  var r: array<vec2<f32>, LB>;
  for (var i = 0u; i < LB; i++) {
    let s = b_slot(lid, i);
    let n = n0 + s.x;
    let k = k0 + s.y;
    if (n < p.N && k < p.K) { r[i] = b[base + k * p.b_ks + n * p.b_ns]; }
  }
  return r;
}
fn stage_a(lid: u32, buf: u32, r: ptr<function, array<vec2<f32>, LA>>) {
  for (var i = 0u; i < LA; i++) {
    let s = a_slot(lid, i);
    let slot = buf * AS_BUF + s.y * AS_STRIDE + s.x / 4u;
    let v = (*r)[i];
    Ar[slot][s.x % 4u] = v.x;
    Ai[slot][s.x % 4u] = v.y;
#if THREE
    As[slot][s.x % 4u] = v.x + v.y;
#endif
  }
}
fn stage_b(lid: u32, buf: u32, r: ptr<function, array<vec2<f32>, LB>>) {
  for (var i = 0u; i < LB; i++) {
    let s = b_slot(lid, i);
    let slot = buf * BS_BUF + s.y * BS_STRIDE + s.x / 4u;
    let v = (*r)[i];
    Br[slot][s.x % 4u] = v.x;
    Bi[slot][s.x % 4u] = v.y;
#if THREE
    Bs[slot][s.x % 4u] = v.x + v.y;
#endif
  }
}

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let bases = batch_bases(wid.z + p.batch_base);
  let a_base = bases.x;
  let b_base = bases.y;
  let o_base = bases.z;

  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let tx = lid % NTX;
  let ty = lid / NTX;

  // Four products: (re, im) accumulators. Three: t1 in acc_r, t2 in acc_i, t3 in acc_s.
  var acc_r: array<vec4<f32>, TM * TN4>;
  var acc_i: array<vec4<f32>, TM * TN4>;
#if THREE
  var acc_s: array<vec4<f32>, TM * TN4>;
#endif

  let chunks = (p.K + BK - 1u) / BK;
  var ra = fetch_a(lid, a_base, m0, 0u);
  var rb = fetch_b(lid, b_base, n0, 0u);
  stage_a(lid, 0u, &ra);
  stage_b(lid, 0u, &rb);
  workgroupBarrier();

  for (var t = 0u; t < chunks; t++) {
    let cur = t & 1u;
    let more = t + 1u < chunks;
    if (more) {
      let kn = (t + 1u) * BK;
      ra = fetch_a(lid, a_base, m0, kn);
      rb = fetch_b(lid, b_base, n0, kn);
    }
    let abuf = cur * AS_BUF;
    let bbuf = cur * BS_BUF;
    for (var kk = 0u; kk < BK; kk++) {
      var ar: array<vec4<f32>, TM4>;
      var ai: array<vec4<f32>, TM4>;
      var br: array<vec4<f32>, TN4>;
      var bi: array<vec4<f32>, TN4>;
      for (var ii = 0u; ii < TM4; ii++) {
        ar[ii] = Ar[abuf + kk * AS_STRIDE + ty + ii * NTY];
        ai[ii] = Ai[abuf + kk * AS_STRIDE + ty + ii * NTY];
      }
      for (var jj = 0u; jj < TN4; jj++) {
        br[jj] = Br[bbuf + kk * BS_STRIDE + tx + jj * NTX];
        bi[jj] = Bi[bbuf + kk * BS_STRIDE + tx + jj * NTX];
      }
#if THREE
      var as_: array<vec4<f32>, TM4>;
      var bs: array<vec4<f32>, TN4>;
      for (var ii = 0u; ii < TM4; ii++) { as_[ii] = As[abuf + kk * AS_STRIDE + ty + ii * NTY]; }
      for (var jj = 0u; jj < TN4; jj++) { bs[jj] = Bs[bbuf + kk * BS_STRIDE + tx + jj * NTX]; }
#endif
      for (var ii = 0u; ii < TM4; ii++) {
        for (var r = 0u; r < 4u; r++) {
          let sr = vec4<f32>(ar[ii][r]);
          let si = vec4<f32>(ai[ii][r]);
#if THREE
          let ss = vec4<f32>(as_[ii][r]);
#endif
          for (var jj = 0u; jj < TN4; jj++) {
            let idx = (ii * 4u + r) * TN4 + jj;
#if THREE
            acc_r[idx] = fma(sr, br[jj], acc_r[idx]);
            acc_i[idx] = fma(si, bi[jj], acc_i[idx]);
            acc_s[idx] = fma(ss, bs[jj], acc_s[idx]);
#else
            acc_r[idx] = fma(sr, br[jj], acc_r[idx]);
            acc_r[idx] = fma(-si, bi[jj], acc_r[idx]);
            acc_i[idx] = fma(sr, bi[jj], acc_i[idx]);
            acc_i[idx] = fma(si, br[jj], acc_i[idx]);
#endif
          }
        }
      }
    }
    if (more) {
      stage_a(lid, 1u - cur, &ra);
      stage_b(lid, 1u - cur, &rb);
    }
    workgroupBarrier();
  }

  for (var ii = 0u; ii < TM4; ii++) {
    for (var r = 0u; r < 4u; r++) {
      let m = m0 + (ty + ii * NTY) * 4u + r;
      if (m >= p.M) { continue; }
      for (var jj = 0u; jj < TN4; jj++) {
        let n = n0 + (tx + jj * NTX) * 4u;
        let idx = (ii * 4u + r) * TN4 + jj;
#if THREE
        let re = acc_r[idx] - acc_i[idx];
        let im = acc_s[idx] - acc_r[idx] - acc_i[idx];
#else
        let re = acc_r[idx];
        let im = acc_i[idx];
#endif
        let dst = o_base + m * p.o_rs + n;
        for (var c = 0u; c < 4u; c++) {
          if (n + c < p.N) { o[dst + c] = vec2<f32>(re[c], im[c]); }
        }
      }
    }
  }
}
