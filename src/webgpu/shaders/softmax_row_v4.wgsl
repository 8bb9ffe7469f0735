// Softmax / log-softmax of contiguous rows (length % 4 == 0, 16-byte aligned), one workgroup
// per row, the row held in registers (CACHE vec4 per invocation) so it is read from memory
// once: max reduction, sum of exp, write (two row reductions, see reduce_rowred).
// Defines: F16 (enable f16), T, LOG, CACHE, and those of reduce_rowred (SG ...).
#if F16
enable f16;
#endif
#if SG
enable subgroups;
#endif
#include "reduce_common"
#include "reduce_rowred"

const LOG: bool = {{LOG}};
const CACHE: u32 = {{CACHE}}u;

@group(0) @binding(0) var<storage, read> x: array<vec4<{{T}}>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<{{T}}>>;
@group(0) @binding(2) var<uniform> p: RowParams;

fn hmax(v: vec4<f32>) -> f32 { return nmax(nmax(v.x, v.y), nmax(v.z, v.w)); }

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
  var m = -p.pinf;
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      v[c] = vec4<f32>(x[ib + i]);
      m = nmax(m, hmax(v[c]));
    }
  }
  m = row_reduce(2u, m, lid, sgs, sgl, 0u);
  var s = 0.0;
  for (var c = 0u; c < CACHE; c++) {
    if (lid + c * WG < n4) {
      let e = exp(v[c] - vec4<f32>(m));
      s += (e.x + e.y) + (e.z + e.w);
      if (LOG) { v[c] -= vec4<f32>(m); } else { v[c] = e; }
    }
  }
  s = row_reduce(0u, s, lid, sgs, sgl, 1u);
  let inv = 1.0 / s;
  let ls = log(s);
  let bad = softmax_row_nan(m, s);
  for (var c = 0u; c < CACHE; c++) {
    let i = lid + c * WG;
    if (i < n4) {
      var o: vec4<f32>;
      // v[c] holds x - m (log) or exp(x - m).
      if (LOG) { o = v[c] - vec4<f32>(ls); } else { o = v[c] * inv; }
      y[ob + i] = vec4<{{T}}>(select(o, vec4<f32>(p.qnan), bad));
    }
  }
}
