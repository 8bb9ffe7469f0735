// RMSNorm over the last dim of a strided tensor, one workgroup per row (three passes over the
// row): y = x / sqrt(mean(x^2) + eps) * w. Defines: F16 (enable f16), T, HAS_W. Without a weight the
// launcher binds x at binding 1 so the layout stays fixed.
#if F16
enable f16;
#endif
#include "reduce_common"
#include "norm_scale"

const HAS_W: bool = {{HAS_W}};

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read> w: array<{{T}}>;
@group(0) @binding(2) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(3) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.n_out) { return; }
  let ib = p.in_off + row_in_off(row);
  let ob = p.out_off + row_out_off(row);
  let is = p.istride[0].x;
  // Three passes: max|x|, the sum of squares scaled by it (no overflow: rms_inv), the output.
  var m = 0.0;
  for (var r = lid; r < p.n_red; r += WG) { m = nmax(m, abs(f32(x[ib + r * is]))); }
  let scale = rms_scale(wg_max(m, lid));
  var ss = 0.0;
  for (var r = lid; r < p.n_red; r += WG) {
    let v = rms_scaled(f32(x[ib + r * is]), scale);
    ss += v * v;
  }
  ss = wg_sum(ss, lid);
  let inv = rms_inv_scaled(ss, f32(p.n_red), p.eps, scale);
  for (var r = lid; r < p.n_red; r += WG) {
    var o = div_scale(f32(x[ib + r * is]), scale) * inv;
    if (HAS_W) { o *= f32(w[p.w_off + r * p.w_stride]); }
    y[ob + r] = {{T}}(o);
  }
}
