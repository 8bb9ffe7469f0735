// Register-blocked tiled matmul: o[z, m, n] = sum_k A[z, m, k] * B[z, k, n] (launcher: kernels/matmul.cpp).
// One workgroup computes a BM x BN output tile; each invocation owns TM x TN outputs held in
// registers. K is walked in BK chunks staged in workgroup memory (two buffers: the next chunk is
// fetched into registers while the current one is consumed, so one barrier per chunk suffices).
// Operands are read through element strides, so transposed views need no compaction; the
// *_KFAST defines only pick which thread->element mapping keeps the global reads coalesced.
//
// Storage access (f32, native f16 or f16 packed two per u32) and the stores come from
// matmul_io.wgsl. Defines: A_STORE, B_STORE, A_VEC, B_VEC, O_MODE (matmul_io.wgsl); ACC16 (f16
// compute type), BM BN BK TM TN (TM, TN multiples of 4), A_KFAST, B_KFAST (the operand's K
// stride is the unit one). A_VEC / B_VEC: the launcher guarantees that the unit-stride dim's
// extent % 4 == 0 and every other stride/offset % 4 == 0.
#if A_STORE == 1 || B_STORE == 1
enable f16;
#endif

#if ACC16
alias CT = f16;
#else
alias CT = f32;
#endif

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const A_KFAST: bool = {{A_KFAST}};
const B_KFAST: bool = {{B_KFAST}};
const A_VEC: bool = {{A_VEC}};
const B_VEC: bool = {{B_VEC}};

const NTX: u32 = BN / TN;             // invocations along N
const NTY: u32 = BM / TM;             // invocations along M
const NT: u32 = NTX * NTY;
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
// Rows of the staged tiles are K-major and padded by one vec4: the transposing stores of a
// K-contiguous operand then hit distinct banks instead of all landing on one.
const AS_STRIDE: u32 = BM / 4u + 1u;
const BS_STRIDE: u32 = BN / 4u + 1u;
const AS_BUF: u32 = BK * AS_STRIDE;
const BS_BUF: u32 = BK * BS_STRIDE;
// Fetches per invocation per chunk: scalars (LA, LB) or vec4 (LA4, LB4); the unused form
// keeps a 1-element array.
const LA: u32 = select(1u, BM * BK / NT, !A_VEC);
const LB: u32 = select(1u, BN * BK / NT, !B_VEC);
const LA4: u32 = select(1u, BM * BK / 4u / NT, A_VEC);
const LB4: u32 = select(1u, BN * BK / 4u / NT, B_VEC);
const BK4: u32 = BK / 4u;

#include "matmul_io"

var<workgroup> As: array<vec4<CT>, 2u * AS_BUF>;
var<workgroup> Bs: array<vec4<CT>, 2u * BS_BUF>;


// Element (m, k) of the A chunk handled by scalar fetch slot i of invocation lid.
fn a_slot(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (A_KFAST) { return vec2<u32>(e / BK, e % BK); }
  return vec2<u32>(e % BM, e / BM);
}
// Element (n, k) of the B chunk handled by scalar fetch slot i of invocation lid.
fn b_slot(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (B_KFAST) { return vec2<u32>(e / BK, e % BK); }
  return vec2<u32>(e % BN, e / BN);
}
// First element (m, k) of the vec4 fetch slot i: 4 consecutive k (K-fast) or m (M-fast).
// Neighbouring invocations take neighbouring vec4 of one row, so a row's BK/4 (K-fast) or
// BM/4 (M-fast) vec4 are read as one contiguous run.
fn a_slot4(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (A_KFAST) { return vec2<u32>(e / BK4, (e % BK4) * 4u); }
  return vec2<u32>((e % (BM / 4u)) * 4u, e / (BM / 4u));
}
fn b_slot4(lid: u32, i: u32) -> vec2<u32> {
  let e = lid + i * NT;
  if (B_KFAST) { return vec2<u32>(e / BK4, (e % BK4) * 4u); }
  return vec2<u32>((e % (BN / 4u)) * 4u, e / (BN / 4u));
}

fn fetch_a(lid: u32, base: u32, m0: u32, k0: u32) -> array<CT, LA> {
  var r: array<CT, LA>;
  if (A_VEC) { return r; }
  for (var i = 0u; i < LA; i++) {
    let s = a_slot(lid, i);
    let m = m0 + s.x;
    let k = k0 + s.y;
    if (m < p.M && k < p.K) { r[i] = lda1(base + m * p.a_ms + k * p.a_ks); }
  }
  return r;
}
fn fetch_b(lid: u32, base: u32, n0: u32, k0: u32) -> array<CT, LB> {
  var r: array<CT, LB>;
  if (B_VEC) { return r; }
  for (var i = 0u; i < LB; i++) {
    let s = b_slot(lid, i);
    let n = n0 + s.x;
    let k = k0 + s.y;
    if (n < p.N && k < p.K) { r[i] = ldb1(base + k * p.b_ks + n * p.b_ns); }
  }
  return r;
}
// The vectorized extent is a multiple of 4, so a vec4 starting in range lies wholly in range.
fn fetch_a4(lid: u32, base: u32, m0: u32, k0: u32) -> array<vec4<CT>, LA4> {
  var r: array<vec4<CT>, LA4>;
  if (!A_VEC) { return r; }
  for (var i = 0u; i < LA4; i++) {
    let s = a_slot4(lid, i);
    let m = m0 + s.x;
    let k = k0 + s.y;
    if (m < p.M && k < p.K) { r[i] = lda4((base + m * p.a_ms + k * p.a_ks) / 4u); }
  }
  return r;
}
fn fetch_b4(lid: u32, base: u32, n0: u32, k0: u32) -> array<vec4<CT>, LB4> {
  var r: array<vec4<CT>, LB4>;
  if (!B_VEC) { return r; }
  for (var i = 0u; i < LB4; i++) {
    let s = b_slot4(lid, i);
    let n = n0 + s.x;
    let k = k0 + s.y;
    if (n < p.N && k < p.K) { r[i] = ldb4((base + k * p.b_ks + n * p.b_ns) / 4u); }
  }
  return r;
}
fn stage_a(lid: u32, buf: u32, r: ptr<function, array<CT, LA>>, r4: ptr<function, array<vec4<CT>, LA4>>) {
  if (A_VEC) {
    for (var i = 0u; i < LA4; i++) {
      let s = a_slot4(lid, i);
      if (A_KFAST) {
        // Transposing store: 4 k rows of one m column.
        for (var j = 0u; j < 4u; j++) { As[buf * AS_BUF + (s.y + j) * AS_STRIDE + s.x / 4u][s.x % 4u] = (*r4)[i][j]; }
      } else {
        As[buf * AS_BUF + s.y * AS_STRIDE + s.x / 4u] = (*r4)[i];
      }
    }
    return;
  }
  for (var i = 0u; i < LA; i++) {
    let s = a_slot(lid, i);
    As[buf * AS_BUF + s.y * AS_STRIDE + s.x / 4u][s.x % 4u] = (*r)[i];
  }
}
fn stage_b(lid: u32, buf: u32, r: ptr<function, array<CT, LB>>, r4: ptr<function, array<vec4<CT>, LB4>>) {
  if (B_VEC) {
    for (var i = 0u; i < LB4; i++) {
      let s = b_slot4(lid, i);
      if (B_KFAST) {
        for (var j = 0u; j < 4u; j++) { Bs[buf * BS_BUF + (s.y + j) * BS_STRIDE + s.x / 4u][s.x % 4u] = (*r4)[i][j]; }
      } else {
        Bs[buf * BS_BUF + s.y * BS_STRIDE + s.x / 4u] = (*r4)[i];
      }
    }
    return;
  }
  for (var i = 0u; i < LB; i++) {
    let s = b_slot(lid, i);
    Bs[buf * BS_BUF + s.y * BS_STRIDE + s.x / 4u][s.x % 4u] = (*r)[i];
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

  // Invocation (tx, ty) owns rows 4*(ty + ii*NTY) + r and columns 4*(tx + jj*NTX) + c: the
  // vec4 reads of the staged tiles are then broadcast (A) or consecutive (B) within a subgroup.
  var acc: array<vec4<CT>, TM * TN4>;

  let chunks = (p.K + BK - 1u) / BK;
  var ra = fetch_a(lid, a_base, m0, 0u);
  var rb = fetch_b(lid, b_base, n0, 0u);
  var ra4 = fetch_a4(lid, a_base, m0, 0u);
  var rb4 = fetch_b4(lid, b_base, n0, 0u);
  stage_a(lid, 0u, &ra, &ra4);
  stage_b(lid, 0u, &rb, &rb4);
  workgroupBarrier();

  for (var t = 0u; t < chunks; t++) {
    let cur = t & 1u;
    let more = t + 1u < chunks;
    if (more) {
      // Issued before the math so the global latency overlaps it.
      let kn = (t + 1u) * BK;
      ra = fetch_a(lid, a_base, m0, kn);
      rb = fetch_b(lid, b_base, n0, kn);
      ra4 = fetch_a4(lid, a_base, m0, kn);
      rb4 = fetch_b4(lid, b_base, n0, kn);
    }
    let abuf = cur * AS_BUF;
    let bbuf = cur * BS_BUF;
    for (var kk = 0u; kk < BK; kk++) {
      var av: array<vec4<CT>, TM4>;
      var bv: array<vec4<CT>, TN4>;
      for (var ii = 0u; ii < TM4; ii++) { av[ii] = As[abuf + kk * AS_STRIDE + ty + ii * NTY]; }
      for (var jj = 0u; jj < TN4; jj++) { bv[jj] = Bs[bbuf + kk * BS_STRIDE + tx + jj * NTX]; }
      for (var ii = 0u; ii < TM4; ii++) {
        for (var r = 0u; r < 4u; r++) {
          let s = vec4<CT>(av[ii][r]);
          for (var jj = 0u; jj < TN4; jj++) {
            let idx = (ii * 4u + r) * TN4 + jj;
            acc[idx] = fma(s, bv[jj], acc[idx]);
          }
        }
      }
    }
    if (more) {
      // The other buffer was last read in chunk t-1, which every invocation finished before
      // the barrier that closed it.
      stage_a(lid, 1u - cur, &ra, &ra4);
      stage_b(lid, 1u - cur, &rb, &rb4);
    }
    workgroupBarrier();
  }

  for (var ii = 0u; ii < TM4; ii++) {
    for (var r = 0u; r < 4u; r++) {
      let m = m0 + (ty + ii * NTY) * 4u + r;
      if (m >= p.M) { continue; }
      for (var jj = 0u; jj < TN4; jj++) {
        let n = n0 + (tx + jj * NTX) * 4u;
        let v = vec4<f32>(acc[(ii * 4u + r) * TN4 + jj]);
        let dst = o_base + m * p.o_rs + n;
        if (n + 3u < p.N) {
          st4(dst, v);
        } else {
          for (var c = 0u; c < 4u; c++) {
            if (n + c < p.N) { st1(dst + c, v[c]); }
          }
        }
      }
    }
  }
}
