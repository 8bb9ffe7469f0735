// Quantized embedding lookup (get_rows): y[i, :] = dequantize(w[ids[i], :]), one invocation
// per 8 elements of a requested row. Ids are checked on the host when they live there; a
// device id outside [0, rows) yields a NaN row and sets the op's bit (params.flag) in the
// status word: OutOfRange at the next read-back or synchronize (Context::status_flag).
// Defines: QCONST (block constants), DECODE (the format's decoder shader, q*_decode).
// Bindings: w, ids, y, status, params.
struct Params {
  n_ids: u32,
  cols: u32,
  row_bytes: u32,
  rows: u32,
  nan_bits: u32,  // 0x7fc00000 from the host: a NaN constant would be a WGSL const-eval error
  flag: u32,
  pad1: u32,
  pad2: u32,
};
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> params: Params;

#include "q_bytes"
#include "{{DECODE}}"

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = gid.x + gid.y * nwg.x * 64u;
  let per_row = params.cols / 8u;
  if (t >= params.n_ids * per_row) { return; }
  let i = t / per_row;
  let e = (t % per_row) * 8u;
  let o = i * params.cols + e;
  let id = ids[i];
  if (id < 0 || u32(id) >= params.rows) {
    atomicOr(&status[0], params.flag);
    for (var k = 0u; k < 8u; k = k + 1u) { y[o + k] = bitcast<f32>(params.nan_bits); }
    return;
  }
  let v = decode8(u32(id) * params.row_bytes, e);
  for (var k = 0u; k < 8u; k = k + 1u) { y[o + k] = v[k]; }
}
