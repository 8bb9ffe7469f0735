// Elementwise kernels on complex64 (interleaved re, im f32 pairs) with broadcasting over
// strided inputs: one invocation per output element (launcher: kernels/complex.cpp, plan:
// plans/complex_plan.cpp). Defines: OP (ComplexEwOp: 0 add, 1 sub, 2 mul, 3 div, 4 eq, 5 ne,
// 6 neg, 7 conj, 8 exp, 9 copy, 10 abs, 11 real, 12 imag, 13 nonzero, 14 from_real, 15 where,
// 16 fill), N_IN, S0..S2 (ComplexSlot of each input: 1 c64, 2 f32, 3 bool bytes in u32 words),
// T0..T2 and TO (their WGSL element types), O_BIND and P_BIND (binding numbers).
struct Params {
  n: u32, rank: u32, out_off: u32, zero: u32,
  off: vec4<u32>,                          // element offsets of inputs 0..2
  shape: array<vec4<u32>, 2>,              // output shape (collapsed), outermost first
  strides: array<array<vec4<u32>, 2>, 3>,  // per input, in elements (0 = broadcast)
  f0: f32, f1: f32, pad0: u32, pad1: u32,  // f0: the fill value
}

#if N_IN >= 1
@group(0) @binding(0) var<storage, read> in0: array<{{T0}}>;
#endif
#if N_IN >= 2
@group(0) @binding(1) var<storage, read> in1: array<{{T1}}>;
#endif
#if N_IN >= 3
@group(0) @binding(2) var<storage, read> in2: array<{{T2}}>;
#endif
@group(0) @binding({{O_BIND}}) var<storage, read_write> out: array<{{TO}}>;
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

#include "complex_math"

#include "ew_offset"

fn bool_at(w: u32, i: u32) -> bool { return ((w >> (8u * (i % 4u))) & 0xffu) != 0u; }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = gid.x + gid.y * nwg.x * 256u;
  if (e >= params.n) { return; }
#if N_IN >= 1 && S0 == 3
  let c = bool_at(in0[in_offset(e, 0u) / 4u], in_offset(e, 0u));
#elif N_IN >= 1
  let x = in0[in_offset(e, 0u)];
#endif
#if N_IN >= 2
  let y = in1[in_offset(e, 1u)];
#endif
#if N_IN >= 3
  let w = in2[in_offset(e, 2u)];
#endif
#if OP == 0
  let r = x + y;
#elif OP == 1
  let r = x - y;
#elif OP == 2
  let r = cx_mul(x, y);
#elif OP == 3
  let r = cx_div(x, y);
#elif OP == 4
  // IEEE: NaN parts compare unequal.
  let r = select(0.0, 1.0, x.x == y.x && x.y == y.y && !cx_is_nan(x.x) && !cx_is_nan(x.y) && !cx_is_nan(y.x) && !cx_is_nan(y.y));
#elif OP == 5
  let r = select(1.0, 0.0, x.x == y.x && x.y == y.y && !cx_is_nan(x.x) && !cx_is_nan(x.y) && !cx_is_nan(y.x) && !cx_is_nan(y.y));
#elif OP == 6
  let r = -x;
#elif OP == 7
  let r = vec2<f32>(x.x, -x.y);
#elif OP == 8
  let r = cx_exp(x);
#elif OP == 9
  let r = x;
#elif OP == 10
  let r = cx_abs(x);
#elif OP == 11
  let r = x.x;
#elif OP == 12
  let r = x.y;
#elif OP == 13
  // NaN is truthy (docs/semantics.md): the test is on the bits.
  let r = select(0.0, 1.0, (bitcast<u32>(x.x) & 0x7fffffffu) != 0u || (bitcast<u32>(x.y) & 0x7fffffffu) != 0u);
#elif OP == 14
  let r = vec2<f32>(x, 0.0);
#elif OP == 15
  let r = select(w, y, c);
#elif OP == 16
  let r = vec2<f32>(params.f0, 0.0);
#endif
  out[params.out_off + e] = r;
}
