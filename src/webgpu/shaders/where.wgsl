// where(cond, a, b) with broadcasting: cond loaded as 0/nonzero from any dtype.
// Bindings: cond, a, b, out, params.
@group(0) @binding(0) var<storage, read> c: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;
#include "ew_common"

fn compute_bits(e: u32) -> u32 {
  let ci = in_offset(e, 0u);
  let ai = in_offset(e, 1u);
  let bi = in_offset(e, 2u);
  let cond = {{LOAD_C}}(c[ci / {{C_PW}}u], ci % {{C_PW}}u);
  let x: {{CT}} = {{LOAD_A}}(a[ai / {{A_PW}}u], ai % {{A_PW}}u);
  let y: {{CT}} = {{LOAD_B}}(b[bi / {{B_PW}}u], bi % {{B_PW}}u);
  return {{STORE}}(select(y, x, cond != 0));
}
#include "ew_main"
