// Sum / mean of contiguous rows (length % 4 == 0, 16-byte aligned), one workgroup per row:
// each invocation reads vec4s U at a time (U independent loads in flight instead of one
// load-add dependency per element, the generic reduce_rows' pattern), then one row reduction
// (reduce_rowred). The read-only streaming kernel of the runtime: with rows of a few KiB it
// moves its bytes with the access pattern of the vec4 copy, and BENCHMARKS.md uses it as the
// floor of any one dispatch that must read that many bytes.
// Defines: F16 (enable f16), T, OP (0 sum, 1 mean), and those of reduce_rowred (SG ...).
#if F16
enable f16;
#endif
#if SG
enable subgroups;
#endif
#include "reduce_common"
#include "reduce_rowred"

const OP: u32 = {{OP}}u;
const U: u32 = 4u;

@group(0) @binding(0) var<storage, read> x: array<vec4<{{T}}>>;
@group(0) @binding(1) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(2) var<uniform> p: RowParams;

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
  if (row >= p.n_out) { return; }  // workgroup-uniform
  let ib = (p.in_off + row_in_off(row)) / 4u;
  let n4 = p.n_red / 4u;
  var acc = vec4<f32>();
  for (var i0 = lid; i0 < n4; i0 += U * WG) {
    var v: array<vec4<f32>, U>;
    // Clamped indices keep the U loads unconditional (all issued before the first add).
    for (var c = 0u; c < U; c++) {
      let i = i0 + c * WG;
      v[c] = select(vec4<f32>(), vec4<f32>(x[ib + min(i, n4 - 1u)]), i < n4);
    }
    for (var c = 0u; c < U; c++) { acc += v[c]; }
  }
  var s = row_reduce(0u, (acc.x + acc.y) + (acc.z + acc.w), lid, sgs, sgl, 0u);
  if (lid == 0u) {
    if (OP == 1u) { s = s / f32(p.n_red); }
    y[p.out_off + row] = {{T}}(s);
  }
}
