// Fast path of binary f32 ops: contiguous same-shape operands, 16-byte aligned offsets,
// n % 4 == 0; one vec4 per invocation (memory-bound: this is what reaches HBM bandwidth).
// Bindings: a, b, out, params (n and offsets counted in vec4s).
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> params: Params;
#include "ew_common"
#include "fdiv"

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i >= params.n) { return; }
  let x = a[params.off[0] + i];
  let y = b[params.off[1] + i];
  // OP: wgt::BinaryOp Add, Sub, Mul or Div, on whole vec4s.
#if OP == 0
  out[params.out_off + i] = x + y;
#elif OP == 1
  out[params.out_off + i] = x - y;
#elif OP == 2
  out[params.out_off + i] = x * y;
#elif OP == 3
  out[params.out_off + i] = fdiv4(x, y);
#endif
}
