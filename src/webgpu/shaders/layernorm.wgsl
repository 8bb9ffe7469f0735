// LayerNorm over the last dim of a strided tensor, one workgroup per row: max|x|, the mean, then
// the centered variance (two-pass, for accuracy), then y = (x - mean) / sqrt(var + eps) * w + b.
// Defines: F16 (enable f16), T, HAS_W, HAS_B (missing operands are bound to x by the launcher).
#if F16
enable f16;
#endif
#include "reduce_common"
#include "norm_scale"

const HAS_W: bool = {{HAS_W}};
const HAS_B: bool = {{HAS_B}};

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read> w: array<{{T}}>;
@group(0) @binding(2) var<storage, read> b: array<{{T}}>;
@group(0) @binding(3) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(4) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.n_out) { return; }
  let ib = p.in_off + row_in_off(row);
  let ob = p.out_off + row_out_off(row);
  let is = p.istride[0].x;
  let n = f32(p.n_red);
  // Statistics of u = x / scale (norm_scale: no f32 overflow for finite x), so four passes:
  // max|x|, mean(u), the centered variance of u, the output (u - mean) / sqrt(var + eps/scale^2).
  var m = 0.0;
  for (var r = lid; r < p.n_red; r += WG) { m = nmax(m, abs(f32(x[ib + r * is]))); }
  let scale = norm_scale(wg_max(m, lid));
  let u0 = div_scale(f32(x[ib]), scale);  // the pivot (norm_scale.wgsl); mean is that of u - u0
  var s = 0.0;
  for (var r = lid; r < p.n_red; r += WG) { s += div_scale(f32(x[ib + r * is]), scale) - u0; }
  let mean = wg_sum(s, lid) / n;
  var q = 0.0;
  for (var r = lid; r < p.n_red; r += WG) {
    let d = (div_scale(f32(x[ib + r * is]), scale) - u0) - mean;
    q += d * d;
  }
  let inv = ln_inv(wg_sum(q, lid) / n, p.eps, scale);
  for (var r = lid; r < p.n_red; r += WG) {
    var o = ((div_scale(f32(x[ib + r * is]), scale) - u0) - mean) * inv;
    if (HAS_W) { o *= f32(w[p.w_off + r * p.w_stride]); }
    if (HAS_B) { o += f32(b[p.b_off + r * p.b_stride]); }
    y[ob + r] = {{T}}(o);
  }
}
