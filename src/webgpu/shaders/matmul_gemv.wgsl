// Small-M matmul (decode-style, M <= 4): o[z, m, n] = sum_k A[z, m, k] * B[z, k, n].
// The work is reading B once, so a workgroup covers NC = WG / KS output columns with KS
// invocations splitting K for each, then reduces the KS partial sums in workgroup memory.
// B_KFAST (B's K stride is the unit one, as for x @ W^T) lays the KS invocations of one column
// side by side so consecutive invocations read consecutive k; otherwise consecutive
// invocations take consecutive columns. Accumulates in f32 whatever the storage type.
// Defines: WG (invocations), KS (power of two dividing WG), B_KFAST, and the storage access
// of matmul_io.wgsl (A_STORE, B_STORE, O_MODE; f32, native f16 or f16 packed in u32).
#if A_STORE == 1 || B_STORE == 1
enable f16;
#endif

alias CT = f32;

const WG: u32 = {{WG}}u;
const KS: u32 = {{KS}}u;
const NC: u32 = WG / KS;
const MMAX: u32 = 4u;
const B_KFAST: bool = {{B_KFAST}};

#include "matmul_io"


var<workgroup> red: array<f32, MMAX * WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let bases = batch_bases(wid.z + p.batch_base);
  let a_base = bases.x;
  let b_base = bases.y;
  let o_base = bases.z;

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
      let b0 = ldb1(bcol + k * p.b_ks);
      let b1 = ldb1(bcol + (k + KS) * p.b_ks);
      for (var m = 0u; m < rows; m++) {
        let arow = a_base + m * p.a_ms;
        acc[m] += lda1(arow + k * p.a_ks) * b0 + lda1(arow + (k + KS) * p.a_ks) * b1;
      }
    }
    if (k < p.K) {
      let b0 = ldb1(bcol + k * p.b_ks);
      for (var m = 0u; m < rows; m++) { acc[m] += lda1(a_base + m * p.a_ms + k * p.a_ks) * b0; }
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
    for (var m = 0u; m < rows; m++) { st1(o_base + m * p.o_rs + n, red[m * WG + slot]); }
  }
}
