// Softmax / log-softmax over one axis of a strided tensor, one workgroup per row: a single
// online pass computes (max, sum of exp) per invocation, a workgroup combine merges them,
// and a second pass writes. Defines: F16 (enable f16), T, LOG ("true" for log-softmax).
#if F16
enable f16;
#endif
#include "reduce_common"

const LOG: bool = {{LOG}};

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(2) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.n_out) { return; }
  let ib = p.in_off + row_in_off(row);
  let ob = p.out_off + row_out_off(row);
  let is = p.istride[0].x;
  var st = vec2<f32>(-p.pinf, 0.0);
  for (var r = lid; r < p.n_red; r += WG) { st = ms_push(st, f32(x[ib + r * is])); }
  st = wg_ms(st, lid);
  let m = st.x;
  let inv = 1.0 / st.y;
  let ls = log(st.y);
  let bad = softmax_row_nan(m, st.y);
  for (var r = lid; r < p.n_red; r += WG) {
    let v = f32(x[ib + r * is]);
    var o: f32;
    // (v - m) first, as in the reference: exact for close values, so large logits keep precision.
    if (LOG) { o = (v - m) - ls; } else { o = exp(v - m) * inv; }
    y[ob + r * p.out_istride] = {{T}}(select(o, p.qnan, bad));
  }
}
