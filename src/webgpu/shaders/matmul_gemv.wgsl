// Small-M matmul (decode-style, M <= 4): o[z, m, n] = sum_k A[z, m, k] * B[z, k, n].
// The work is reading B once, so a workgroup covers NC = WG / KS output columns with KS
// invocations splitting K for each, then reduces the KS partial sums in workgroup memory.
// B_KFAST (B's K stride is the unit one, as for x @ W^T) lays the KS invocations of one column
// side by side so consecutive invocations read consecutive k; otherwise consecutive
// invocations take consecutive columns. Accumulates in f32 whatever the storage type.
// Defines: ENABLE, T (f32|f16), WG (invocations), KS (power of two dividing WG), B_KFAST.
{{ENABLE}}

alias T = {{T}};

const WG: u32 = {{WG}}u;
const KS: u32 = {{KS}}u;
const NC: u32 = WG / KS;
const MMAX: u32 = 4u;
const B_KFAST: bool = {{B_KFAST}};

// Mirrors MatmulParams in kernels/matmul.cpp (element units).
struct Params {
  M: u32, N: u32, K: u32, batch_base: u32,
  a_off: u32, a_ms: u32, a_ks: u32, o_off: u32,
  b_off: u32, b_ks: u32, b_ns: u32, o_rs: u32,
  o_bs: u32, bd1: u32, bd2: u32, pad0: u32,
  a_bs0: u32, a_bs1: u32, a_bs2: u32, pad1: u32,
  b_bs0: u32, b_bs1: u32, b_bs2: u32, pad2: u32,
}

@group(0) @binding(0) var<storage, read> a: array<T>;
@group(0) @binding(1) var<storage, read> b: array<T>;
@group(0) @binding(2) var<storage, read_write> o: array<T>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> red: array<f32, MMAX * WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let z = wid.z + p.batch_base;
  let i2 = z % p.bd2;
  let i1 = (z / p.bd2) % p.bd1;
  let i0 = z / (p.bd2 * p.bd1);
  let a_base = p.a_off + i0 * p.a_bs0 + i1 * p.a_bs1 + i2 * p.a_bs2;
  let b_base = p.b_off + i0 * p.b_bs0 + i1 * p.b_bs1 + i2 * p.b_bs2;
  let o_base = p.o_off + z * p.o_bs;

  var c: u32;
  var s: u32;
  if (B_KFAST) { c = lid / KS; s = lid % KS; } else { c = lid % NC; s = lid / NC; }
  let n = wid.x * NC + c;
  let rows = min(p.M, MMAX);

  var acc = array<f32, MMAX>(0.0, 0.0, 0.0, 0.0);
  if (n < p.N) {
    let bcol = b_base + n * p.b_ns;
    var k = s;
    // Two independent loads per step keep more reads of B in flight.
    for (; k + KS < p.K; k += 2u * KS) {
      let b0 = f32(b[bcol + k * p.b_ks]);
      let b1 = f32(b[bcol + (k + KS) * p.b_ks]);
      for (var m = 0u; m < rows; m++) {
        let arow = a_base + m * p.a_ms;
        acc[m] += f32(a[arow + k * p.a_ks]) * b0 + f32(a[arow + (k + KS) * p.a_ks]) * b1;
      }
    }
    if (k < p.K) {
      let b0 = f32(b[bcol + k * p.b_ks]);
      for (var m = 0u; m < rows; m++) { acc[m] += f32(a[a_base + m * p.a_ms + k * p.a_ks]) * b0; }
    }
  }

  // Partial sums of column c live at red[m*WG + c*KS + s]; halve the KS span per step.
  let slot = c * KS + s;
  for (var m = 0u; m < MMAX; m++) { red[m * WG + slot] = acc[m]; }
  workgroupBarrier();
  for (var w = KS / 2u; w > 0u; w /= 2u) {
    if (s < w) {
      for (var m = 0u; m < MMAX; m++) { red[m * WG + slot] += red[m * WG + slot + w]; }
    }
    workgroupBarrier();
  }
  if (s == 0u && n < p.N) {
    for (var m = 0u; m < rows; m++) { o[o_base + m * p.o_rs + n] = T(red[m * WG + slot]); }
  }
}
