// Adaptive SpMV (wgt::SparseSchedule::Adaptive, CSR-Adaptive): y = A x over the row blocks
// made on the host (src/sparse/row_blocks.hpp), one workgroup of WG invocations per block.
// Every block's entries [k0, k1) (at most D) are streamed contiguously: each invocation loads
// its entries' indices and values together (coalesced), gathers x, and stages the products in
// workgroup memory. Then
//   - a stream block (rows [r0, r1), at most WG of them): each row gets `lanes` invocations
//     (the largest power of two with rows * lanes <= WG; the partition bounds the entries a
//     lane adds alone), which sum its staged products and reduce in workgroup memory; the
//     first lane writes the row, empty rows included (0);
//   - a chunk of a split row (the split flag on k0): the whole workgroup sums the chunk into
//     carry[block]; sparse_adaptive_fixup.wgsl adds a row's chunks and writes the row.
// blocks (u32 pairs from p.rb_off): (r0, k0 | SPLIT) per block, then the end (rows, nnz).
#include "sparse_common"

struct Params {
  blocks: u32, rb_off: u32, y_off: u32, ip_off: u32,
  ix_off: u32, v_off: u32, b_off: u32, bs0: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> vals: array<u32>;
@group(0) @binding(3) var<storage, read> b: array<u32>;
@group(0) @binding(4) var<storage, read> blocks: array<u32>;
@group(0) @binding(5) var<storage, read_write> carry: array<u32>;
@group(0) @binding(6) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> p: Params;

#include "sparse_store"

const D: u32 = {{D}}u;    // most entries of a block (kBlockEntries)
const WG: u32 = {{WG}}u;  // invocations = most rows of a stream block (kBlockRows)
const PER: u32 = D / WG;  // entries staged per invocation
const SPLIT: u32 = 0x80000000u;

var<workgroup> s_prod: array<f32, D>;
var<workgroup> s_red: array<f32, WG>;
var<workgroup> s_blk: vec4<u32>;

fn row_start(r: u32) -> u32 { return indptr[IW * (p.ip_off + r)]; }

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let blk = wg.x + wg.y * nwg.x;
  if (blk >= p.blocks) { return; }  // uniform per workgroup
  if (t == 0u) {
    let at = p.rb_off + 2u * blk;
    s_blk = vec4<u32>(blocks[at], blocks[at + 1u], blocks[at + 2u], blocks[at + 3u]);
  }
  let h = workgroupUniformLoad(&s_blk);
  let split = (h.y & SPLIT) != 0u;
  let r0 = h.x;
  let k0 = h.y & ~SPLIT;
  let count = (h.w & ~SPLIT) - k0;
  let nrows = select(h.z - r0, 1u, split);
  // This invocation's row and lane, and the row's bounds in the staging, read before the
  // staging so that their loads are in flight together with the block's.
  var lanes = WG;
  while (lanes > 1u && lanes * nrows > WG) { lanes >>= 1u; }  // uniform: nrows is
  let lr = t / lanes;
  let lane = t % lanes;
  var lo = 0u;
  var hi = count;
  if (lr < nrows && !split) {
    lo = row_start(r0 + lr) - k0;
    hi = row_start(r0 + lr + 1u) - k0;
  }
  // Stage the products: all indices and values first, then all gathers, so each invocation
  // has PER loads of each kind in flight rather than one dependent pair at a time.
  var col: array<u32, PER>;
  var av: array<f32, PER>;
  for (var u = 0u; u < PER; u++) {
    let i = t + u * WG;
    if (i < count) {
      let k = k0 + i;
      col[u] = indices[IW * (p.ix_off + k)];
      let e = p.v_off + k;
      av[u] = val_of(vals[word_of(e)], e);
    }
  }
  for (var u = 0u; u < PER; u++) {
    let i = t + u * WG;
    if (i < count) {
      let e = p.b_off + col[u] * p.bs0;
      s_prod[i] = av[u] * val_of(b[word_of(e)], e);
    }
  }
  workgroupBarrier();
  var acc = 0.0;
  if (lr < nrows) {
    for (var i = lo + lane; i < hi; i += lanes) { acc += s_prod[i]; }
  }
  if (lanes > 1u) {  // uniform
    s_red[t] = acc;
    workgroupBarrier();
    for (var s = lanes / 2u; s > 0u; s >>= 1u) {
      if (lane < s) { s_red[t] += s_red[t + s]; }
      workgroupBarrier();
    }
    acc = s_red[t];
  }
  if (lane == 0u && lr < nrows) {
    if (split) {
      carry[blk] = bitcast<u32>(acc);
    } else {
      store(p.y_off + r0 + lr, acc);
    }
  }
}
