// Quantized prefill y[M, N] = x[M, K] W^T on subgroup matrices (tensor cores): the f16 product
// of sgmat_core.wgsl with A = x as rounded by q_x_f16.wgsl (rows scaled by powers of two, undone
// here by rs[m] as y is stored) and B = the packed GGUF rows of W, decoded to f16 eight
// elements at a time (the format's decode8) as each K chunk is fetched, and staged
// K-contiguous (B_KFAST). Every packed byte is read ceil(M / BM) times; the arithmetic runs on
// the matrix units at the f16 kernel's rate. Launcher: kernels/quant.cpp; plan:
// plans/qmatmul_plan.cpp. A decoded weight beyond f16's range (65504) would become inf: GGUF
// weights are far inside it.
// Defines: BM BN BK FM FN SM SN SK SGS and the staged data path (SG_FETCH 0, no ablation:
// sgmat_core), QCONST, DECODE (q*_decode).
// Bindings: a (xh), w, y, rs, params.
enable f16;
enable chromium_experimental_subgroup_matrix;

struct Params {
  M: u32,
  N: u32,
  K: u32,
  batch_base: u32,  // always 0: one matrix
  a_ms: u32,        // K: xh rows
  row_bytes: u32,   // bytes of one packed W row
  o_rs: u32,        // N: y rows
  pad: u32,
};
@group(0) @binding(0) var<storage, read> a: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read> rs: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

#include "q_bytes"
#include "{{DECODE}}"

const BK8: u32 = BK / 8u;
const LB8: u32 = LB4 / 2u;  // decoded octets per invocation per chunk (the plan keeps LB4 even)

alias RB = array<vec4<f16>, LB4>;

// Octet o of the chunk: row n0 + o / BK8, elements k0 + (o % BK8) * 8 ..+7, as r[2i], r[2i+1].
fn fetch_b(lid: u32, base: u32, n0: u32, k0: u32) -> RB {
  var r: RB;
  for (var i = 0u; i < LB8; i++) {
    let o = lid + i * NT;
    let n = n0 + o / BK8;
    let k = k0 + (o % BK8) * 8u;
    if (n < p.N && k < p.K) {
      let v = decode8(n * p.row_bytes, k);
      r[2u * i] = vec4<f16>(vec4<f32>(v[0], v[1], v[2], v[3]));
      r[2u * i + 1u] = vec4<f16>(vec4<f32>(v[4], v[5], v[6], v[7]));
    }
  }
  return r;
}
fn stage_b(lid: u32, buf: u32, r: ptr<function, RB>) {
  for (var i = 0u; i < LB8; i++) {
    let o = lid + i * NT;
    let at = buf * B_BUF + (o / BK8) * BST + (o % BK8) * 8u;
    let v0 = (*r)[2u * i];
    let v1 = (*r)[2u * i + 1u];
    Bs[at] = v0.x; Bs[at + 1u] = v0.y; Bs[at + 2u] = v0.z; Bs[at + 3u] = v0.w;
    Bs[at + 4u] = v1.x; Bs[at + 5u] = v1.y; Bs[at + 6u] = v1.z; Bs[at + 7u] = v1.w;
  }
}

fn batch_bases(z: u32) -> vec3<u32> { return vec3<u32>(0u); }  // one matrix
fn store4(o_base: u32, m: u32, n: u32, v: vec4<f32>) {
  let e = m * p.o_rs + n;
  let s = rs[m];
  y[e] = v.x * s; y[e + 1u] = v.y * s; y[e + 2u] = v.z * s; y[e + 3u] = v.w * s;
}
fn store1(o_base: u32, m: u32, n: u32, v: f32) { y[m * p.o_rs + n] = v * rs[m]; }

#include "sgmat_core"
