// Gather and index_select (an index_select is a gather whose index dims broadcast over the
// dims before and after the axis): out[e] = x[base(e) + idx[ibase(e)] * ax_stride], output
// contiguous from y_off. Indices are i32 (IW = 1) or i64 read as (lo, hi) u32 words (IW = 2).
// An out-of-range index (negative, >= ax_size) never reads outside x: its element is zero and
// the op's bit (p.flag) is set in the status word, which the backend turns into OutOfRange at
// the next read-back or synchronize (the CPU raises it at once; a device kernel cannot throw).
// Defines: EB (element bytes), IW (index words).
#include "index_common"

const IW: u32 = {{IW}}u;

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> p: IndexParams;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = gid.x + gid.y * nwg.x * WG;
  if (e >= p.numel) { return; }
  let o = offsets(e);
  let io = p.b_off + o.y;
  let lo = idx[IW * io];
  var hi = 0u;
  if (IW == 2u) { hi = idx[2u * io + 1u]; }
  let bad = hi != 0u || lo >= p.ax_size;  // i32 negatives are >= 2^31 as u32
  if (bad) { atomicOr(&status[0], p.flag); }
  let sel = select(lo, 0u, bad);
  copy_elem(p.x_off + o.x + sel * p.ax_stride, p.y_off + e, bad);
}
