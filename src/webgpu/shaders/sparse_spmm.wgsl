// Y = A B for a CSR matrix A (SpMV when n = 1). One workgroup of 256 invocations holds
// R = 256 / (L * C) rows; in each, L lanes split the row's stored entries and C lanes take
// dense columns (c, c + C, ... for n > C). Partial sums of the L lanes meet in workgroup
// memory. The schedules of wgt::SparseSchedule are instances: thread per row (L = C = 1),
// L lanes per row, and the binned schedule, one dispatch per bin of rows of similar length
// with the row ids from `rows_list` (LIST = 1) and the bin's L (256: a workgroup per row).
// B is read through its strides (row-major, column-major or sliced); with VEC = 4 (f32, unit
// column stride, n, B's row stride and both offsets multiples of 4) a lane reads and writes
// four adjacent columns as one vec4, and "columns" below count vec4s.
#include "sparse_common"

struct Params {
  count: u32, list_off: u32, n: u32, y_off: u32,
  ip_off: u32, ix_off: u32, v_off: u32, b_off: u32,
  bs0: u32, bs1: u32, pad0: u32, pad1: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> vals: array<u32>;
#if VEC == 4
@group(0) @binding(3) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> rows_list: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(6) var<uniform> p: Params;
alias ACC = vec4<f32>;
fn bval(j: u32, c: u32) -> ACC { return b[(p.b_off + j * p.bs0) / 4u + c]; }
fn put(r: u32, c: u32, v: ACC) { y[(p.y_off + r * p.n) / 4u + c] = v; }
#else
@group(0) @binding(3) var<storage, read> b: array<u32>;
@group(0) @binding(4) var<storage, read> rows_list: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> p: Params;
#include "sparse_store"
alias ACC = f32;
fn bval(j: u32, c: u32) -> ACC {
  let be = p.b_off + j * p.bs0 + c * p.bs1;
  return val_of(b[word_of(be)], be);
}
fn put(r: u32, c: u32, v: ACC) { store(p.y_off + r * p.n + c, v); }
#endif

const L: u32 = {{L}}u;
const C: u32 = {{C}}u;
const LIST: u32 = {{LIST}}u;
const VEC: u32 = {{VEC}}u;
const R: u32 = 256u / (L * C);

var<workgroup> red: array<ACC, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let slot = (wg.x + wg.y * nwg.x) * R + t / (L * C);
  let lane = (t / C) % L;
  let col = t % C;
  let valid = slot < p.count;
  var r = slot;
  if (LIST == 1u && valid) { r = rows_list[p.list_off + slot]; }
  var k0 = 0u;
  var k1 = 0u;
  if (valid) {
    k0 = indptr[IW * (p.ip_off + r)];
    k1 = indptr[IW * (p.ip_off + r + 1u)];
  }
  // Uniform loop (p.n is uniform): the barriers of the lane reduction stay in uniform flow.
  let nc = p.n / VEC;
  for (var c0 = 0u; c0 < nc; c0 += C) {
    let c = c0 + col;
    var acc = ACC(0.0);
    if (valid && c < nc) {
      for (var k = k0 + lane; k < k1; k += L) {
        let j = indices[IW * (p.ix_off + k)];
        let ve = p.v_off + k;
        acc += val_of(vals[word_of(ve)], ve) * bval(j, c);
      }
    }
    if (L > 1u) {
      red[t] = acc;
      workgroupBarrier();
      for (var s = L / 2u; s > 0u; s >>= 1u) {
        if (lane < s) { red[t] += red[t + s * C]; }
        workgroupBarrier();
      }
      acc = red[t];
      workgroupBarrier();  // red is rewritten by the next column step
    }
    if (valid && c < nc && lane == 0u) { put(r, c, acc); }
  }
}
