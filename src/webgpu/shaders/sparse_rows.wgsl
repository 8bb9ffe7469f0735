// Per-row reductions over a CSR matrix's stored entries, L lanes per row (R = 256 / L rows
// per workgroup): OP 0 = row sum, 1 = row max (empty row: -inf), 2 = softmax of the stored
// entries (written per entry). NaN rules of the dense softmax (docs/semantics.md): a NaN or
// +inf entry, or a row of only -inf, gives a row of NaN; max propagates NaN.
#include "sparse_common"

struct Params {
  rows: u32, ip_off: u32, v_off: u32, y_off: u32,
  zero: u32, pad0: u32, pad1: u32, pad2: u32,  // zero: always 0 (below)
}

@group(0) @binding(0) var<storage, read> indptr: array<u32>;
@group(0) @binding(1) var<storage, read> vals: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;

#include "sparse_store"

const L: u32 = {{L}}u;
const OP: u32 = {{OP}}u;
const R: u32 = 256u / L;

var<workgroup> red: array<f32, 256>;
var<workgroup> nan_seen: array<u32, 256>;

fn is_nan(v: f32) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }
// Built from p.zero: a constant-folded bitcast to inf or NaN is a WGSL compile error.
fn ninf() -> f32 { return bitcast<f32>(0xff800000u | p.zero); }
fn pinf() -> f32 { return bitcast<f32>(0x7f800000u | p.zero); }
fn qnan() -> f32 { return bitcast<f32>(0x7fc00000u | p.zero); }

fn val(k: u32) -> f32 {
  let e = p.v_off + k;
  return val_of(vals[word_of(e)], e);
}

// Reduces v over the L lanes of this invocation's row (max when is_max); NaN is tracked apart
// because max() of WGSL may drop a NaN operand.
fn lanes_reduce(t: u32, lane: u32, v: f32, nan_in: bool, is_max: bool) -> f32 {
  red[t] = v;
  nan_seen[t] = select(0u, 1u, nan_in);
  workgroupBarrier();
  for (var s = L / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      red[t] = select(red[t] + red[t + s], max(red[t], red[t + s]), is_max);
      nan_seen[t] |= nan_seen[t + s];
    }
    workgroupBarrier();
  }
  let base = t - lane;
  var r = red[base];
  if (nan_seen[base] != 0u) { r = qnan(); }
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = (wg.x + wg.y * nwg.x) * R + t / L;
  let lane = t % L;
  let valid = r < p.rows;
  var k0 = 0u;
  var k1 = 0u;
  if (valid) {
    k0 = indptr[IW * (p.ip_off + r)];
    k1 = indptr[IW * (p.ip_off + r + 1u)];
  }
  var mx = ninf();
  var sum = 0.0;
  var nan_in = false;
  for (var k = k0 + lane; k < k1; k += L) {
    let v = val(k);
    nan_in = nan_in || is_nan(v);
    mx = max(mx, v);
    sum += v;
  }
  if (OP == 0u) {
    let s = lanes_reduce(t, lane, sum, nan_in, false);
    if (valid && lane == 0u) { store(p.y_off + r, s); }
    return;
  }
  let m = lanes_reduce(t, lane, mx, nan_in, true);
  if (OP == 1u) {
    if (valid && lane == 0u) { store(p.y_off + r, m); }
    return;
  }
  // Softmax: subtract the max (a row of only -inf subtracts 0 and gives 0 / 0 = NaN; +inf
  // gives inf - inf = NaN), as the CPU does.
  var sub = m;
  if (m == ninf()) { sub = 0.0; }
  var se = 0.0;
  for (var k = k0 + lane; k < k1; k += L) { se += exp(val(k) - sub); }
  let total = lanes_reduce(t, lane, se, is_nan(m) || m == pinf(), false);
  for (var k = k0 + lane; k < k1; k += L) {
    var o = exp(val(k) - sub) / total;
    if (is_nan(total) || total == 0.0) { o = qnan(); }
    store(p.y_off + k, o);
  }
}
