// RMSNorm of contiguous rows (length % 4 == 0, 16-byte aligned; weight contiguous), one
// workgroup per row held in registers so the row is read from memory once.
// Defines: F16 (enable f16), T, HAS_W, CACHE (vec4 per invocation), and reduce_rowred's (SG ...).
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
const CACHE: u32 = {{CACHE}}u;

@group(0) @binding(0) var<storage, read> x: array<vec4<{{T}}>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<{{T}}>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec4<{{T}}>>;
@group(0) @binding(3) var<uniform> p: RowParams;

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
  // The sum of squares scaled by max|x| (rms_inv in reduce_common: no overflow).
  let scale = rms_scale(row_reduce(2u, m, lid, sgs, sgl, 0u));
  var ss = 0.0;
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      let q = vec4<f32>(rms_scaled(v[c].x, scale), rms_scaled(v[c].y, scale), rms_scaled(v[c].z, scale),
                        rms_scaled(v[c].w, scale));
      ss += dot(q, q);
    }
  }
  ss = row_reduce(0u, ss, lid, sgs, sgl, 1u);
  let inv = rms_inv_scaled(ss, f32(p.n_red), p.eps, scale);
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      var o = div_scale4(v[c], scale) * inv;
      if (HAS_W) { o *= vec4<f32>(w[p.w_off / 4u + i]); }
      y[ob + i] = vec4<{{T}}>(o);
    }
  }
}
