// Fix-up pass of the Adaptive SpMV (sparse_adaptive.wgsl): one invocation per row block; the
// first chunk of a split row adds the partial sums of the row's chunks (consecutive blocks
// with the split flag and that row) and writes the row, rounded once to the value type.
#include "sparse_common"

struct Params {
  blocks: u32, rb_off: u32, y_off: u32, ip_off: u32,
  ix_off: u32, v_off: u32, b_off: u32, bs0: u32,
}

@group(0) @binding(0) var<storage, read> blocks: array<u32>;
@group(0) @binding(1) var<storage, read> carry: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;

#include "sparse_store"

const SPLIT: u32 = 0x80000000u;

fn chunk_of(c: u32, r: u32) -> bool {
  return (blocks[p.rb_off + 2u * c + 1u] & SPLIT) != 0u && blocks[p.rb_off + 2u * c] == r;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let blk = gid.x + gid.y * nwg.x * 256u;
  if (blk >= p.blocks) { return; }
  let r = blocks[p.rb_off + 2u * blk];
  if (!chunk_of(blk, r) || (blk > 0u && chunk_of(blk - 1u, r))) { return; }
  var sum = 0.0;
  for (var c = blk; c < p.blocks && chunk_of(c, r); c++) { sum += bitcast<f32>(carry[c]); }
  store(p.y_off + r, sum);
}
