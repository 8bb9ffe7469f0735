// Fill and Arange: out[e] = VALUE (an expression of e and the params scalars).
// Bindings: out, params.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;
#include "ew_common"

fn compute_bits(e: u32) -> u32 {
  let v: {{CT}} = {{VALUE}};
  return {{STORE}}(v);
}
#include "ew_main"
