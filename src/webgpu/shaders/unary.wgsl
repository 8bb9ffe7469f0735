// Unary ops and casts: out = OP(x) computed in CT (f32 or i32), x loaded from any dtype of
// a strided view. Bindings: a, out, params. The op: ew_ops.wgsl.
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
#include "ew_common"
#include "ew_ops"

fn compute_bits(e: u32) -> u32 {
  let i = in_offset(e, 0u);
  let x: {{CT}} = {{LOAD_A}}(a[i / {{A_PW}}u], i % {{A_PW}}u);
  return {{STORE}}(op1(x));
}
#include "ew_main"
