// Merge-path SpMM / SpMV (wgt::SparseSchedule::MergePath): the rows' ends and the stored
// entries form one merged list of rows + nnz items (a row's end comes after its entries), and
// every workgroup takes D = M * E consecutive items, whatever the row lengths: a huge row is
// split over many workgroups, a run of empty rows costs one item each. Three kernels:
//   sparse_merge_partition: the merge-path coordinates (row, entry) of every workgroup
//      boundary, found by a binary search over indptr (one invocation per boundary);
//   this one: M merge threads per workgroup (times C column lanes) walk E items each; a row
//      whose end a thread meets is written by that thread, plus the partial sums of the
//      threads before it in the workgroup that the row spans (walked in workgroup memory);
//      the row still open at the workgroup's end leaves its partial sum as a carry-out;
//   sparse_merge_fixup: the carry-outs of a run of workgroups that one row spans are added to
//      that row's output (one invocation per run and column), since WGSL has no f32 atomics.
// carry (scratch, u32 words): [0, 2 (G + 1)) boundary coordinates, [2 (G + 1), 3 G + 2) the
// carried row of each workgroup (NONE: nothing carried), then G * n carried partials (f32).
// VEC = 4 (f32, B's rows and Y vec4-aligned, n % 4 == 0): a column lane takes four adjacent
// columns as one vec4 (C counts vec4 lanes).
#include "sparse_common"

struct Params {
  rows: u32, nnz: u32, n: u32, y_off: u32,
  ip_off: u32, ix_off: u32, v_off: u32, b_off: u32,
  bs0: u32, bs1: u32, groups: u32, pad0: u32,
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> vals: array<u32>;
#if VEC == 4
@group(0) @binding(3) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> carry: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(6) var<uniform> p: Params;
alias ACC = vec4<f32>;
fn bval(j: u32, c: u32) -> ACC { return b[(p.b_off + j * p.bs0) / 4u + c]; }
fn put(r: u32, c: u32, v: ACC) { y[(p.y_off + r * p.n) / 4u + c] = v; }
fn put_carry(w: u32, c: u32, v: ACC) {
  for (var i = 0u; i < 4u; i++) { carry[3u * p.groups + 2u + w * p.n + 4u * c + i] = bitcast<u32>(v[i]); }
}
#else
@group(0) @binding(3) var<storage, read> b: array<u32>;
@group(0) @binding(4) var<storage, read_write> carry: array<u32>;
@group(0) @binding(5) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> p: Params;
#include "sparse_store"
alias ACC = f32;
fn bval(j: u32, c: u32) -> ACC {
  let e = p.b_off + j * p.bs0 + c * p.bs1;
  return val_of(b[word_of(e)], e);
}
fn put(r: u32, c: u32, v: ACC) { store(p.y_off + r * p.n + c, v); }
fn put_carry(w: u32, c: u32, v: ACC) { carry[3u * p.groups + 2u + w * p.n + c] = bitcast<u32>(v); }
#endif

const VEC: u32 = {{VEC}}u;
const C: u32 = {{C}}u;  // column lanes per merge thread
const E: u32 = {{E}}u;  // merge items per merge thread
const M: u32 = 256u / C;
const D: u32 = M * E;   // merge items per workgroup
const NONE: u32 = 0xffffffffu;

fn row_end(r: u32) -> u32 { return indptr[IW * (p.ip_off + r + 1u)]; }
fn aval(k: u32) -> f32 {
  let e = p.v_off + k;
  return val_of(vals[word_of(e)], e);
}

var<workgroup> s_end: array<u32, D + 1u>;  // ends of the workgroup's rows x0 .. x1
var<workgroup> s_crow: array<u32, M>;       // row open at each merge thread's end
var<workgroup> s_cval: array<ACC, 256>;     // its partial sum, per column lane
var<workgroup> s_x0: u32;
var<workgroup> s_x1: u32;
#if C == 1
var<workgroup> s_prod: array<f32, D>;       // SpMV: the products of the workgroup's entries
#endif

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let wi = wg.x + wg.y * nwg.x;
  if (wi >= p.groups) { return; }  // uniform per workgroup
  if (t == 0u) {
    s_x0 = carry[2u * wi];
    s_x1 = carry[2u * wi + 2u];
  }
  let x0 = workgroupUniformLoad(&s_x0);
  let x1 = workgroupUniformLoad(&s_x1);
  let d0 = wi * D;
  let d1 = min(d0 + D, p.rows + p.nnz);
  let y0 = d0 - x0;
  let y1 = d1 - x1;
  // Row ends x0 .. x1 (x1 itself only when it is a row: the open row at the end).
  for (var i = t; i <= x1 - x0; i += 256u) {
    s_end[i] = select(NONE, row_end(x0 + i), x0 + i < p.rows);
  }
#if C == 1
  for (var i = t; i < y1 - y0; i += 256u) {
    let k = y0 + i;
    s_prod[i] = aval(k) * bval(indices[IW * (p.ix_off + k)], 0u);
  }
#endif
  workgroupBarrier();
  let m = t / C;
  let lane = t % C;
  // This merge thread's first item (local diagonal) and its coordinate, searched in s_end.
  let dm = min(m * E, d1 - d0);
  let dn = min(dm + E, d1 - d0);
  var lo = select(0u, dm - (y1 - y0), dm > y1 - y0);
  var hi = min(dm, x1 - x0);
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    if (s_end[mid] <= y0 + dm - mid - 1u) { lo = mid + 1u; } else { hi = mid; }
  }
  let xm = lo;
  let km = y0 + dm - lo;
  let nc = p.n / VEC;
  for (var c0 = 0u; c0 < nc; c0 += C) {  // uniform: the barriers below stay in uniform flow
    let c = c0 + lane;
    let live = c < nc;
    var xl = xm;
    var k = km;
    var acc = ACC(0.0);
    var first_row = NONE;
    var first_val = ACC(0.0);
    for (var it = dm; it < dn; it++) {
      if (k < s_end[xl]) {
#if C == 1
        acc += s_prod[k - y0];
#else
        if (live) { acc += aval(k) * bval(indices[IW * (p.ix_off + k)], c); }
#endif
        k++;
      } else {
        if (first_row == NONE) {
          first_row = x0 + xl;  // may continue a row of earlier threads: written after the walk
          first_val = acc;
        } else if (live) {
          put(x0 + xl, c, acc);
        }
        acc = ACC(0.0);
        xl++;
      }
    }
    s_crow[m] = x0 + xl;
    s_cval[t] = acc;
    workgroupBarrier();
    if (first_row != NONE && live) {
      var s = first_val;
      for (var j = m; j > 0u && s_crow[j - 1u] == first_row; j--) { s += s_cval[(j - 1u) * C + lane]; }
      put(first_row, c, s);
    }
    if (m == M - 1u) {
      // The row open at the workgroup's end: its partial sum here goes to the fix-up.
      let r = s_crow[M - 1u];
      var s = ACC(0.0);
      for (var j = M; j > 0u && s_crow[j - 1u] == r; j--) { s += s_cval[(j - 1u) * C + lane]; }
      if (lane == 0u && c0 == 0u) { carry[2u * (p.groups + 1u) + wi] = select(NONE, r, r < p.rows); }
      if (live) { put_carry(wi, c, s); }
    }
    workgroupBarrier();  // s_crow / s_cval are rewritten by the next column step
  }
}
