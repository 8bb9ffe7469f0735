// Binary ops with broadcasting over strided inputs: out = OP(x, y) in CT. Comparisons
// yield 0/1 stored as Bool bytes (4 per word). Bindings: a, b, out, params.
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
#include "ew_common"
#include "ew_ops"

fn compute_bits(e: u32) -> u32 {
  let i = in_offset(e, 0u);
  let k = in_offset(e, 1u);
  let x: {{CT}} = {{LOAD_A}}(a[i / {{A_PW}}u], i % {{A_PW}}u);
  let y: {{CT}} = {{LOAD_B}}(b[k / {{B_PW}}u], k % {{B_PW}}u);
  return {{STORE}}(op2(x, y));
}
#include "ew_main"
