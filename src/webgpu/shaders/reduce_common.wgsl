// Shared by the row kernels of the reduce family (included, not a kernel): the row-layout
// params, strided index decomposition, NaN-aware min/max and 256-wide workgroup reductions.
// A "row" is the set of elements reduced/normalized together (inner dims); rows are indexed
// by the outer dims. Offsets are in elements and wrap modulo 2^32, so negative strides work.

struct RowParams {
  oshape: array<vec4<u32>, 2>,    // outer dims (coalesced, innermost last)
  ostride: array<vec4<u32>, 2>,   // input strides of the outer dims
  oostride: array<vec4<u32>, 2>,  // output strides of the outer dims
  ishape: array<vec4<u32>, 2>,    // inner (row) dims
  istride: array<vec4<u32>, 2>,   // input strides of the inner dims
  orank: u32, irank: u32, n_out: u32, n_red: u32,
  in_off: u32, out_off: u32, out_istride: u32, w_stride: u32,
  w_off: u32, b_off: u32, b_stride: u32, pinf: f32,
  eps: f32, qnan: f32, pad0: u32, pad1: u32,
}

const WG: u32 = 256u;

fn row_in_off(row: u32) -> u32 {
  var r = row;
  var off = 0u;
  for (var d = p.orank; d > 0u; d--) {
    let k = d - 1u;
    let s = p.oshape[k >> 2u][k & 3u];
    off += (r % s) * p.ostride[k >> 2u][k & 3u];
    r /= s;
  }
  return off;
}

fn row_out_off(row: u32) -> u32 {
  var r = row;
  var off = 0u;
  for (var d = p.orank; d > 0u; d--) {
    let k = d - 1u;
    let s = p.oshape[k >> 2u][k & 3u];
    off += (r % s) * p.oostride[k >> 2u][k & 3u];
    r /= s;
  }
  return off;
}

// Input offset of the r-th element of a row (row-major over the inner dims).
fn inner_off(idx: u32) -> u32 {
  if (p.irank <= 1u) { return idx * p.istride[0].x; }
  var r = idx;
  var off = 0u;
  for (var d = p.irank; d > 0u; d--) {
    let k = d - 1u;
    let s = p.ishape[k >> 2u][k & 3u];
    off += (r % s) * p.istride[k >> 2u][k & 3u];
    r /= s;
  }
  return off;
}

// Bit test instead of x != x: shader compilers may assume NaN-free arithmetic.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
// max/min that propagate NaN (WGSL's builtins leave NaN handling to the implementation).
fn nmax(a: f32, b: f32) -> f32 {
  if (is_nan(a)) { return a; }
  if (is_nan(b)) { return b; }
  return max(a, b);
}
fn nmin(a: f32, b: f32) -> f32 {
  if (is_nan(a)) { return a; }
  if (is_nan(b)) { return b; }
  return min(a, b);
}

// ReduceOp codes: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 argmax.
fn red_combine(op: u32, a: f32, b: f32) -> f32 {
  switch op {
    case 2u: { return nmax(a, b); }
    case 3u: { return nmin(a, b); }
    case 4u: { return a * b; }
    default: { return a + b; }
  }
}

// argmax order: a NaN beats any number (first NaN wins, as in the CPU reference), then the
// larger value, then the smaller index.
fn argmax_better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  let vn = is_nan(v);
  let bn = is_nan(bv);
  if (vn != bn) { return vn; }
  if (vn || v == bv) { return i < bi; }
  return v > bv;
}

var<workgroup> red_a: array<f32, WG>;
var<workgroup> red_b: array<f32, WG>;
var<workgroup> red_u: array<u32, WG>;

// Must be called from workgroup-uniform control flow by all WG invocations.
fn wg_reduce(op: u32, v: f32, lid: u32) -> f32 {
  red_a[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { red_a[lid] = red_combine(op, red_a[lid], red_a[lid + s]); }
    workgroupBarrier();
  }
  let r = red_a[0];
  workgroupBarrier();
  return r;
}

fn wg_sum(v: f32, lid: u32) -> f32 { return wg_reduce(0u, v, lid); }
fn wg_max(v: f32, lid: u32) -> f32 { return wg_reduce(2u, v, lid); }

// Returns the index of the winning element.
fn wg_argmax(v: f32, i: u32, lid: u32) -> u32 {
  red_a[lid] = v;
  red_u[lid] = i;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s && argmax_better(red_a[lid + s], red_u[lid + s], red_a[lid], red_u[lid])) {
      red_a[lid] = red_a[lid + s];
      red_u[lid] = red_u[lid + s];
    }
    workgroupBarrier();
  }
  let r = red_u[0];
  workgroupBarrier();
  return r;
}

// Softmax rows that are NaN as a whole (docs/semantics.md, as the CPU reference): a NaN or +inf
// element, or every element -inf. By bit tests on the row's max m and sum s of exp(x - m)
// (the subgroup max may drop a NaN that the sum still carries), not by NaN arithmetic that a
// compiler may assume away.
fn softmax_row_nan(m: f32, s: f32) -> bool {
  return (bitcast<u32>(m) & 0x7f800000u) == 0x7f800000u || is_nan(s);
}

// Online softmax state (running max m, sum s of exp(x - m)). s == 0 marks a state that has
// seen no finite-or-+inf element; it is skipped so exp(-inf - -inf) never poisons the sum.
fn ms_combine(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  if (b.y == 0.0) { return a; }
  if (a.y == 0.0) { return b; }
  let m = nmax(a.x, b.x);
  return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

fn ms_push(st: vec2<f32>, x: f32) -> vec2<f32> {
  if (x == -p.pinf) { return st; }  // contributes exactly 0 unless the whole row is -inf
  return ms_combine(st, vec2<f32>(x, 1.0));
}

fn wg_ms(st: vec2<f32>, lid: u32) -> vec2<f32> {
  red_a[lid] = st.x;
  red_b[lid] = st.y;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      let c = ms_combine(vec2<f32>(red_a[lid], red_b[lid]), vec2<f32>(red_a[lid + s], red_b[lid + s]));
      red_a[lid] = c.x;
      red_b[lid] = c.y;
    }
    workgroupBarrier();
  }
  let r = vec2<f32>(red_a[0], red_b[0]);
  workgroupBarrier();
  return r;
}
