// LayerNorm of contiguous rows (length % 4 == 0, 16-byte aligned; weight/bias contiguous),
// one workgroup per row held in registers: read once, max|x|, mean, centered variance, write.
// Defines: F16 (enable f16), T, HAS_W, HAS_B, CACHE (vec4 per invocation), and reduce_rowred's (SG ...).
#if F16
enable f16;
#endif
#if SG
enable subgroups;
#endif
#include "reduce_common"
#include "norm_scale"
#include "reduce_rowred"

const HAS_W: bool = {{HAS_W}};
const HAS_B: bool = {{HAS_B}};
const CACHE: u32 = {{CACHE}}u;

@group(0) @binding(0) var<storage, read> x: array<vec4<{{T}}>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<{{T}}>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<{{T}}>>;
@group(0) @binding(3) var<storage, read_write> y: array<vec4<{{T}}>>;
@group(0) @binding(4) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32
#if SG
        , @builtin(subgroup_size) sgs: u32, @builtin(subgroup_invocation_id) sgl: u32
#endif
        ) {
#if !SG
  let sgs = 1u; let sgl = 0u;
#endif
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.n_out) { return; }
  let ib = (p.in_off + row_in_off(row)) / 4u;
  let ob = (p.out_off + row_out_off(row)) / 4u;
  let n4 = p.n_red / 4u;
  let n = f32(p.n_red);
  var v: array<vec4<f32>, CACHE>;
  var m = 0.0;
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      v[c] = vec4<f32>(x[ib + i]);
      let a = abs(v[c]);
      m = nmax(m, nmax(nmax(a.x, a.y), nmax(a.z, a.w)));
    }
  }
  // Statistics of u = x / scale (norm_scale: no f32 overflow for finite x).
  let scale = norm_scale(row_reduce(2u, m, lid, sgs, sgl, 0u));
  let u0 = div_scale(f32(x[ib].x), scale);  // the pivot (norm_scale.wgsl); mean is that of u - u0
  var s = 0.0;
  for (var c = 0u; c < CACHE; c++) {
    if (lid + c * WG < n4) {
      v[c] = div_scale4(v[c], scale) - vec4<f32>(u0);
      s += (v[c].x + v[c].y) + (v[c].z + v[c].w);
    }
  }
  let mean = row_reduce(0u, s, lid, sgs, sgl, 1u) / n;
  var q = 0.0;
  for (var c = 0u; c < CACHE; c++) {
    if (lid + c * WG < n4) {
      v[c] -= vec4<f32>(mean);
      q += dot(v[c], v[c]);
    }
  }
  let inv = ln_inv(row_reduce(0u, q, lid, sgs, sgl, 0u) / n, p.eps, scale);
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      var o = v[c] * inv;
      if (HAS_W) { o *= vec4<f32>(w[p.w_off / 4u + i]); }
      if (HAS_B) { o += vec4<f32>(b[p.b_off / 4u + i]); }
      y[ob + i] = vec4<{{T}}>(o);
    }
  }
}
