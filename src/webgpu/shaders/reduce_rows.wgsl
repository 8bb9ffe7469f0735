// Reduction with one workgroup per output element: the 256 invocations stride over the row
// (the reduced dims, any strides) and combine through a workgroup tree reduction.
// Defines: F16 (enable f16), T (input type), OUT_T (output element type:
// T, or u32 for argmax, whose I64 result is written as lo/hi words), OP (ReduceOp code).
#if F16
enable f16;
#endif
#include "reduce_common"

const OP: u32 = {{OP}}u;

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{OUT_T}}>;
@group(0) @binding(2) var<uniform> p: RowParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.n_out) { return; }  // workgroup-uniform
  let base = p.in_off + row_in_off(row);
  if (OP == 5u) {
    var bv = -p.pinf;
    var bi = 0xffffffffu;
    for (var r = lid; r < p.n_red; r += WG) {
      let v = f32(x[base + inner_off(r)]);
      if (argmax_better(v, r, bv, bi)) { bv = v; bi = r; }
    }
    let best = wg_argmax(bv, bi, lid);
    if (lid == 0u) {
      y[2u * (p.out_off + row)] = {{OUT_T}}(best);
      y[2u * (p.out_off + row) + 1u] = {{OUT_T}}(0u);
    }
    return;
  }
  var acc = 0.0;
  if (OP == 2u) { acc = -p.pinf; }
  if (OP == 3u) { acc = p.pinf; }
  if (OP == 4u) { acc = 1.0; }
  for (var r = lid; r < p.n_red; r += WG) {
    acc = red_combine(OP, acc, f32(x[base + inner_off(r)]));
  }
  acc = wg_reduce(OP, acc, lid);
  if (lid == 0u) {
    if (OP == 1u) { acc = select(acc / f32(p.n_red), p.qnan, p.n_red == 0u); }
    y[p.out_off + row] = {{OUT_T}}(acc);
  }
}
