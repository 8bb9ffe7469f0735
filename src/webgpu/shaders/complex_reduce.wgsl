// Reductions of complex64 over any axes of a strided view (launcher: kernels/complex.cpp):
// the kept dims (collapsed) index the outputs, the reduced dims (collapsed) the elements of
// each. Defines: OP (0 sum, 1 mean, 2 prod), WG (0: one invocation per output walks its
// elements; 1: 256 invocations share one output, then combine in workgroup memory).
// Accumulation in f32 pairs; mean divides by the count at run time (empty: 0 / 0 = NaN).
struct Params {
  oshape: array<vec4<u32>, 2>, ostride: array<vec4<u32>, 2>,  // kept dims: sizes, input strides
  ishape: array<vec4<u32>, 2>, istride: array<vec4<u32>, 2>,  // reduced dims
  orank: u32, irank: u32, n_out: u32, n_red: u32,
  in_off: u32, out_off: u32, zero: u32, pad0: u32,
}
@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

#include "complex_math"

fn outer_offset(o: u32) -> u32 {
  var rem = o;
  var off = params.in_off;
  for (var d = i32(params.orank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let s = params.oshape[du / 4u][du % 4u];
    off = off + (rem % s) * params.ostride[du / 4u][du % 4u];
    rem = rem / s;
  }
  return off;
}
fn inner_offset(j: u32) -> u32 {
  var rem = j;
  var off = 0u;
  for (var d = i32(params.irank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let s = params.ishape[du / 4u][du % 4u];
    off = off + (rem % s) * params.istride[du / 4u][du % 4u];
    rem = rem / s;
  }
  return off;
}

#if OP == 2
fn cx_identity() -> vec2<f32> { return vec2<f32>(1.0, 0.0); }
fn combine(acc: vec2<f32>, v: vec2<f32>) -> vec2<f32> { return cx_mul(acc, v); }
#else
fn cx_identity() -> vec2<f32> { return vec2<f32>(0.0, 0.0); }
fn combine(acc: vec2<f32>, v: vec2<f32>) -> vec2<f32> { return acc + v; }
#endif

fn finish(acc: vec2<f32>) -> vec2<f32> {
#if OP == 1
  return acc / f32(params.n_red);
#else
  return acc;
#endif
}

#if WG
var<workgroup> partial: array<vec2<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let o = wid.x + wid.y * nwg.x;  // uniform per workgroup: the barriers below are reached by all
  let live = o < params.n_out;
  var acc = cx_identity();
  if (live) {
    let base = outer_offset(o);
    for (var j = lid; j < params.n_red; j += 256u) { acc = combine(acc, x[base + inner_offset(j)]); }
  }
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (lid < s) { partial[lid] = combine(partial[lid], partial[lid + s]); }
    workgroupBarrier();
  }
  if (live && lid == 0u) { out[params.out_off + o] = finish(partial[0]); }
}
#else
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let o = gid.x + gid.y * nwg.x * 256u;
  if (o >= params.n_out) { return; }
  let base = outer_offset(o);
  var acc = cx_identity();
  for (var j = 0u; j < params.n_red; j++) { acc = combine(acc, x[base + inner_offset(j)]); }
  out[params.out_off + o] = finish(acc);
}
#endif
