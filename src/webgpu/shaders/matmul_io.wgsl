// Shared by the matmul kernels (included, not a kernel): params, the bindings a, b, o[, c][, g]
// and their storage access, so one source serves f32, native f16 and f16 packed two per u32
// (core WGSL, no shader-f16). The includer defines `alias CT` (compute type) first.
// Mirrors MatmulParams in kernels/matmul.cpp (element units).
// Defines (src/webgpu/plans/matmul_plan.cpp):
//   A_STORE, B_STORE  0 f32, 1 native f16, 2 f16 packed two per u32; the output is stored
//                     like A
//   A_VEC, B_VEC      the operand is read as vec4 along its unit-stride dim (lda4 / ldb4)
//   B_VEC8            (vector gemv) B is read 8 elements at a time (ldb8)
//   VEC8              (optional; sgmat's 16-byte loads) native f16 a and b bound as
//                     array<vec4<u32>>, 8 halves per element; lda*/ldb* then return zero
//   O_MODE            0 scalar stores, 1 whole vec4, 2 packed f16 whose words each belong to
//                     one invocation, 3 packed f16 where neighbours share a word (atomics, so
//                     the neighbour's half survives)
//   FUSE_C            the addend c at binding 3;  PRO != 0: the prologue operand g at G_BIND
//   P_BIND            the params binding (after them)
// Loads: lda1 / ldb1 (element i -> CT), lda4 / ldb4 (vec4 index i -> vec4<CT>); the form a
// variant does not use returns zero, because a binding has one element type.
// Stores of f32 values: st4 (4 outputs from element e, all in range), st1 (one output at e).
struct Params {
  M: u32, N: u32, K: u32, batch_base: u32,
  a_off: u32, a_ms: u32, a_ks: u32, o_off: u32,
  b_off: u32, b_ks: u32, b_ns: u32, o_rs: u32,
  o_bs: u32, bd1: u32, bd2: u32, c_off: u32,
  a_bs0: u32, a_bs1: u32, a_bs2: u32, g_off: u32,
  b_bs0: u32, b_bs1: u32, b_bs2: u32, eps_bits: u32,
  // The rope_append epilogue of the vector gemv (matmul_epi_rope_append.wgsl); unused elsewhere.
  r_pos: u32, r_qn: u32, r_kvn: u32, r_hd: u32,
  r_nrot: u32, r_base_log2: f32, r_freq_scale: f32, r_f_off: u32,
}
#include "matmul_batch"

#if defined(VEC8) && VEC8
@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
#elif A_STORE == 2 && A_VEC
@group(0) @binding(0) var<storage, read> a: array<vec2<u32>>;
#elif A_STORE == 2
@group(0) @binding(0) var<storage, read> a: array<u32>;
#elif A_STORE == 1 && A_VEC
@group(0) @binding(0) var<storage, read> a: array<vec4<f16>>;
#elif A_STORE == 1
@group(0) @binding(0) var<storage, read> a: array<f16>;
#elif A_VEC
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
#else
@group(0) @binding(0) var<storage, read> a: array<f32>;
#endif

#if defined(VEC8) && VEC8
@group(0) @binding(1) var<storage, read> b: array<vec4<u32>>;
#elif B_VEC8 && B_STORE == 2
@group(0) @binding(1) var<storage, read> b: array<vec4<u32>>;
#elif B_VEC8 && B_STORE == 1
@group(0) @binding(1) var<storage, read> b: array<vec4<f16>>;
#elif B_VEC8
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
#elif B_STORE == 2 && B_VEC
@group(0) @binding(1) var<storage, read> b: array<vec2<u32>>;
#elif B_STORE == 2
@group(0) @binding(1) var<storage, read> b: array<u32>;
#elif B_STORE == 1 && B_VEC
@group(0) @binding(1) var<storage, read> b: array<vec4<f16>>;
#elif B_STORE == 1
@group(0) @binding(1) var<storage, read> b: array<f16>;
#elif B_VEC
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
#else
@group(0) @binding(1) var<storage, read> b: array<f32>;
#endif

#if O_MODE == 3
@group(0) @binding(2) var<storage, read_write> o: array<atomic<u32>>;
#elif O_MODE == 2
@group(0) @binding(2) var<storage, read_write> o: array<u32>;
#elif O_MODE == 1 && A_STORE == 1
@group(0) @binding(2) var<storage, read_write> o: array<vec4<f16>>;
#elif O_MODE == 1
@group(0) @binding(2) var<storage, read_write> o: array<vec4<f32>>;
#elif A_STORE == 1
@group(0) @binding(2) var<storage, read_write> o: array<f16>;
#else
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
#endif

#if FUSE_C
@group(0) @binding(3) var<storage, read> c: array<f32>;
#endif
#if PRO != 0
@group(0) @binding({{G_BIND}}) var<storage, read> g: array<f32>;
#endif
@group(0) @binding({{P_BIND}}) var<uniform> p: Params;

fn lda1(i: u32) -> CT {
#if A_VEC
  return CT();
#elif A_STORE == 2
  return CT(unpack2x16float(a[i >> 1u])[i & 1u]);
#else
  return CT(a[i]);
#endif
}
fn lda4(i: u32) -> vec4<CT> {
#if !A_VEC || (defined(VEC8) && VEC8)
  return vec4<CT>();
#elif A_STORE == 2
  return vec4<CT>(vec4<f32>(unpack2x16float(a[i].x), unpack2x16float(a[i].y)));
#else
  return vec4<CT>(a[i]);
#endif
}

#if B_VEC8
// ldb8(i): B elements i..i+7 (i % 8 == 0) as two vec4<f32>; ldb1(i): element i.
#if B_STORE == 2
fn ldb8(i: u32) -> array<vec4<f32>, 2> {
  let w = b[i >> 3u];
  return array<vec4<f32>, 2>(vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)),
                             vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w)));
}
fn ldb1(i: u32) -> f32 { return unpack2x16float(b[i >> 3u][(i >> 1u) & 3u])[i & 1u]; }
#else
fn ldb8(i: u32) -> array<vec4<f32>, 2> { return array<vec4<f32>, 2>(vec4<f32>(b[i >> 2u]), vec4<f32>(b[(i >> 2u) + 1u])); }
fn ldb1(i: u32) -> f32 { return f32(b[i >> 2u][i & 3u]); }
#endif
#else
fn ldb1(i: u32) -> CT {
#if B_VEC
  return CT();
#elif B_STORE == 2
  return CT(unpack2x16float(b[i >> 1u])[i & 1u]);
#else
  return CT(b[i]);
#endif
}
fn ldb4(i: u32) -> vec4<CT> {
#if !B_VEC || (defined(VEC8) && VEC8)
  return vec4<CT>();
#elif B_STORE == 2
  return vec4<CT>(vec4<f32>(unpack2x16float(b[i].x), unpack2x16float(b[i].y)));
#else
  return vec4<CT>(b[i]);
#endif
}
#endif

#if A_STORE == 1
alias OT = f16;
#else
alias OT = f32;
#endif
#if O_MODE == 0
fn st4(e: u32, v: vec4<f32>) { o[e] = OT(v.x); o[e + 1u] = OT(v.y); o[e + 2u] = OT(v.z); o[e + 3u] = OT(v.w); }
fn st1(e: u32, v: f32) { o[e] = OT(v); }
#elif O_MODE == 1
fn st4(e: u32, v: vec4<f32>) { o[e >> 2u] = vec4<OT>(v); }
fn st1(e: u32, v: f32) {}  // unreachable: N % 4 == 0, so every 4-column group is whole
#elif O_MODE == 2
fn st4(e: u32, v: vec4<f32>) { o[e >> 1u] = pack2x16float(v.xy); o[(e >> 1u) + 1u] = pack2x16float(v.zw); }
fn st1(e: u32, v: f32) {
  let w = e >> 1u;
  let sh = (e & 1u) * 16u;
  let h = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << sh;
  o[w] = (o[w] & ~(0xffffu << sh)) | h;
}
#else
fn st4(e: u32, v: vec4<f32>) { st1(e, v.x); st1(e + 1u, v.y); st1(e + 2u, v.z); st1(e + 3u, v.w); }
fn st1(e: u32, v: f32) {
  let w = e >> 1u;
  let sh = (e & 1u) * 16u;
  let h = (pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu) << sh;
  atomicAnd(&o[w], ~(0xffffu << sh));
  atomicOr(&o[w], h);
}
#endif
