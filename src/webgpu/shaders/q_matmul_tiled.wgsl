// Quantized prefill matmul y[M, N] = x[M, K] W^T for larger M: one 256-invocation workgroup
// computes a BM x BN tile (BM = BN = 16 * T, T x T outputs per invocation in registers). K is
// walked in chunks of 32 (every block size is a multiple of 32): the W chunk [BN, 32] is
// decoded once into workgroup memory (decode8 of the format) and reused by all BM rows of x,
// so each packed weight byte is read M / BM times instead of M times.
// Defines: QCONST, DECODE (q*_decode), T (4 or 8).
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
#include "{{DECODE}}"

const T: u32 = {{T}}u;
const NT: u32 = 256u;
const BM: u32 = 16u * T;
const BN: u32 = 16u * T;
const BK: u32 = 32u;
// Tiles are stored K-major, padded by one word per k row so that the transposing stores
// (consecutive threads -> consecutive k for x, -> other rows for W) spread over the banks.
const XS: u32 = BM + 1u;
const WS: u32 = BN + 1u;
var<workgroup> xs: array<f32, BK * (16u * {{T}}u + 1u)>;
var<workgroup> ws: array<f32, BK * (16u * {{T}}u + 1u)>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let tx = lid % 16u;
  let ty = lid / 16u;
  var acc: array<f32, {{T}}u * {{T}}u>;
  for (var k0 = 0u; k0 < params.k; k0 = k0 + BK) {
    // x chunk [BM, BK]: consecutive threads read consecutive k (coalesced).
    for (var s = 0u; s < BM * BK / NT; s = s + 1u) {
      let idx = lid + s * NT;
      let mm = idx / BK;
      let kk = idx % BK;
      let row = min(m0 + mm, params.m - 1u);  // rows past M are computed and never stored
      xs[kk * XS + mm] = x[row * params.k + k0 + kk];
    }
    // W chunk [BN, BK]: 4 threads decode the 32 values of one row (8 each).
    for (var s = 0u; s < BN * BK / (8u * NT); s = s + 1u) {
      let idx = lid + s * NT;
      let kg = idx % 4u;
      let nn = idx / 4u;
      let row = min(n0 + nn, params.n - 1u);
      let v = decode8(row * params.row_bytes, k0 + 8u * kg);
      for (var i = 0u; i < 8u; i = i + 1u) { ws[(8u * kg + i) * WS + nn] = v[i]; }
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk = kk + 1u) {
      var a: array<f32, {{T}}>;
      var b: array<f32, {{T}}>;
      // invocation (tx, ty) owns rows ty + 16i and columns tx + 16j: the x reads are
      // broadcasts and the W reads consecutive within a subgroup.
      for (var i = 0u; i < T; i = i + 1u) { a[i] = xs[kk * XS + ty + 16u * i]; }
      for (var j = 0u; j < T; j = j + 1u) { b[j] = ws[kk * WS + tx + 16u * j]; }
      for (var i = 0u; i < T; i = i + 1u) {
        for (var j = 0u; j < T; j = j + 1u) { acc[i * T + j] = fma(a[i], b[j], acc[i * T + j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < T; i = i + 1u) {
    let mm = m0 + ty + 16u * i;
    if (mm >= params.m) { continue; }
    for (var j = 0u; j < T; j = j + 1u) {
      let nn = n0 + tx + 16u * j;
      if (nn < params.n) { y[mm * params.n + nn] = acc[i * T + j]; }
    }
  }
}
