// Reduction with one invocation per output element, each looping over its row serially.
// Chosen when rows are short or strided so that neighbouring invocations read neighbouring
// addresses (e.g. reducing the outer axis of a row-major matrix). Same defines as reduce_rows.
#if F16
enable f16;
#endif
#include "reduce_common"

const OP: u32 = {{OP}}u;

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{OUT_T}}>;
@group(0) @binding(2) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * WG;
  if (row >= p.n_out) { return; }
  let base = p.in_off + row_in_off(row);
  if (OP == 5u) {
    var bv = -p.pinf;
    var bi = 0xffffffffu;
    for (var r = 0u; r < p.n_red; r++) {
      let v = f32(x[base + inner_off(r)]);
      if (argmax_better(v, r, bv, bi)) { bv = v; bi = r; }
    }
    y[2u * (p.out_off + row)] = {{OUT_T}}(bi);
    y[2u * (p.out_off + row) + 1u] = {{OUT_T}}(0u);
    return;
  }
  var acc = 0.0;
  if (OP == 2u) { acc = -p.pinf; }
  if (OP == 3u) { acc = p.pinf; }
  if (OP == 4u) { acc = 1.0; }
  for (var r = 0u; r < p.n_red; r++) {
    acc = red_combine(OP, acc, f32(x[base + inner_off(r)]));
  }
  if (OP == 1u) { acc = select(acc / f32(p.n_red), p.qnan, p.n_red == 0u); }
  y[p.out_off + row] = {{OUT_T}}(acc);
}
