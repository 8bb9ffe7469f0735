// Quantized dequantize: one invocation per 8 consecutive elements of a row, y = decode8(...).
// Defines: QCONST (block constants), DECODE (the format's decoder shader, q*_decode).
// Bindings: w, y, params.
struct Params {
  rows: u32,
  cols: u32,
  row_bytes: u32,
  pad: u32,
};
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "q_bytes"
#include "{{DECODE}}"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = gid.x + gid.y * nwg.x * 64u;
  let per_row = params.cols / 8u;
  if (t >= params.rows * per_row) { return; }
  let r = t / per_row;
  let e = (t % per_row) * 8u;
  let v = decode8(r * params.row_bytes, e);
  let o = r * params.cols + e;
  for (var i = 0u; i < 8u; i = i + 1u) { y[o + i] = v[i]; }
}
