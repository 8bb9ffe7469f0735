// One FFT of L points per line, C lines per workgroup, the lines held in workgroup memory
// (src/webgpu/plans/fft_plan.hpp has the plan and the line geometry in Params). Each line is
// loaded once, transformed by NP in-place decimation-in-frequency passes of radix 8, 4, 2, 3,
// 5 or 7 (unrolled through the R*/M*/S*/T* constants), and stored once: frequency k sits at
// the digit reversal rev(k) after the passes. Variants:
//   IN_MODE 0 complex, 1 real (f32), 2 Hermitian (n/2+1 entries define n); the params'
//   conj_in / conj_out (-1) make the inverse conj(F(conj(x))); OUT_REAL stores the real part (irfft);
//   TWIDDLE (four-step column stage) multiplies by w_n^(c k) from two tables (low and high
//   bits of c k) on store;
//   BLUE (Bluestein) multiplies by the chirp on load, by the chirp's spectrum after the passes
//   (stored in digit-reversed order by the host), runs the inverse (decimation-in-time)
//   passes, which return natural order, and multiplies by the chirp on store.
// Twiddles, chirps and spectra come from `tab`, computed on the host in double precision.
#include "fft_io"

const L: u32 = {{L}}u;
const C: u32 = {{C}}u;
const WG: u32 = {{WG}}u;

var<workgroup> sm: array<vec2<f32>, C * L>;

// exp(-2 pi i k / R) for the odd radices.
const ROOT3 = array<vec2<f32>, 3>(vec2<f32>(1.0, 0.0), vec2<f32>(-0.5, -0.86602540378443865),
                                  vec2<f32>(-0.5, 0.86602540378443865));
const ROOT5 = array<vec2<f32>, 5>(vec2<f32>(1.0, 0.0), vec2<f32>(0.30901699437494742, -0.95105651629515357),
                                  vec2<f32>(-0.80901699437494742, -0.58778525229247313),
                                  vec2<f32>(-0.80901699437494742, 0.58778525229247313),
                                  vec2<f32>(0.30901699437494742, 0.95105651629515357));
const ROOT7 = array<vec2<f32>, 7>(vec2<f32>(1.0, 0.0), vec2<f32>(0.62348980185873353, -0.78183148246802981),
                                  vec2<f32>(-0.22252093395631440, -0.97492791218182361),
                                  vec2<f32>(-0.90096886790241913, -0.43388373911755812),
                                  vec2<f32>(-0.90096886790241913, 0.43388373911755812),
                                  vec2<f32>(-0.22252093395631440, 0.97492791218182361),
                                  vec2<f32>(0.62348980185873353, 0.78183148246802981));

// Position of point i of line `line` in workgroup memory: lines interleaved when the loads
// walk lines fastest, else one after the other.
fn sidx(line: u32, i: u32) -> u32 {
#if LOAD_LF
  return i * C + line;
#else
  return line * L + i;
#endif
}

// ---- small DFTs (forward), in place on v[0..R) ----
fn dft2(v: ptr<function, array<vec2<f32>, 8>>) {
  let a = (*v)[0];
  let b = (*v)[1];
  (*v)[0] = a + b;
  (*v)[1] = a - b;
}

fn dft4(v: ptr<function, array<vec2<f32>, 8>>) {
  let t0 = (*v)[0] + (*v)[2];
  let t1 = (*v)[0] - (*v)[2];
  let t2 = (*v)[1] + (*v)[3];
  let t3 = mul_mi((*v)[1] - (*v)[3]);
  (*v)[0] = t0 + t2;
  (*v)[1] = t1 + t3;
  (*v)[2] = t0 - t2;
  (*v)[3] = t1 - t3;
}

fn dft8(v: ptr<function, array<vec2<f32>, 8>>) {
  let e0 = (*v)[0] + (*v)[4];
  let e1 = (*v)[0] - (*v)[4];
  let e2 = (*v)[2] + (*v)[6];
  let e3 = mul_mi((*v)[2] - (*v)[6]);
  let o0 = (*v)[1] + (*v)[5];
  let o1 = (*v)[1] - (*v)[5];
  let o2 = (*v)[3] + (*v)[7];
  let o3 = mul_mi((*v)[3] - (*v)[7]);
  let E0 = e0 + e2;
  let E1 = e1 + e3;
  let E2 = e0 - e2;
  let E3 = e1 - e3;
  let O0 = o0 + o2;
  let O1 = o1 + o3;
  let O2 = o0 - o2;
  let O3 = o1 - o3;
  let s = 0.70710678118654752;
  let T1 = vec2<f32>((O1.x + O1.y) * s, (O1.y - O1.x) * s);   // O1 * exp(-i pi/4)
  let T2 = mul_mi(O2);                                         // O2 * exp(-i pi/2)
  let T3 = vec2<f32>((O3.y - O3.x) * s, -(O3.x + O3.y) * s);  // O3 * exp(-3i pi/4)
  (*v)[0] = E0 + O0;
  (*v)[4] = E0 - O0;
  (*v)[1] = E1 + T1;
  (*v)[5] = E1 - T1;
  (*v)[2] = E2 + T2;
  (*v)[6] = E2 - T2;
  (*v)[3] = E3 + T3;
  (*v)[7] = E3 - T3;
}

fn root(R: u32, k: u32) -> vec2<f32> {
  if (R == 3u) { return ROOT3[k]; }
  if (R == 5u) { return ROOT5[k]; }
  return ROOT7[k];
}

// Radix 3, 5, 7: the direct sum (these lengths are not the fast path).
fn dft_odd(v: ptr<function, array<vec2<f32>, 8>>, R: u32) {
  var o: array<vec2<f32>, 8>;
  for (var q = 0u; q < R; q++) {
    var acc = vec2<f32>(0.0);
    for (var r = 0u; r < R; r++) { acc += cmul((*v)[r], root(R, (r * q) % R)); }
    o[q] = acc;
  }
  for (var q = 0u; q < R; q++) { (*v)[q] = o[q]; }
}

// ---- passes ----
// Butterfly b of a pass: line, block of M points, leg j; its R points are span S apart.
fn butterfly_base(b: u32, R: u32, M: u32, S: u32) -> vec3<u32> {
#if LOAD_LF
  let line = b % C;
  let bj = b / C;
#else
  let line = b / (L / R);
  let bj = b % (L / R);
#endif
  let j = bj % S;
  return vec3<u32>(line, (bj / S) * M + j, j);
}

// Decimation in frequency, radix R: y_q = (sum_r x_r w_R^(rq)) w_M^(jq), in place. One
// function per radix (difR below), so a pass compiles only its own small DFT.
fn dif_load(g: vec3<u32>, R: u32, S: u32) -> array<vec2<f32>, 8> {
  var v: array<vec2<f32>, 8>;
  for (var r = 0u; r < R; r++) { v[r] = sm[sidx(g.x, g.y + r * S)]; }
  return v;
}
fn dif_store(g: vec3<u32>, v: ptr<function, array<vec2<f32>, 8>>, R: u32, S: u32, T: u32) {
  for (var q = 0u; q < R; q++) { sm[sidx(g.x, g.y + q * S)] = cmul((*v)[q], tab[p.tw_off + g.z * q * T]); }
}
fn dif8(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 8u; b += WG) {
    let g = butterfly_base(b, 8u, M, S);
    var v = dif_load(g, 8u, S);
    dft8(&v);
    dif_store(g, &v, 8u, S, T);
  }
}
fn dif4(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 4u; b += WG) {
    let g = butterfly_base(b, 4u, M, S);
    var v = dif_load(g, 4u, S);
    dft4(&v);
    dif_store(g, &v, 4u, S, T);
  }
}
fn dif2(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 2u; b += WG) {
    let g = butterfly_base(b, 2u, M, S);
    var v = dif_load(g, 2u, S);
    dft2(&v);
    dif_store(g, &v, 2u, S, T);
  }
}
fn dif_odd(lid: u32, R: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / R; b += WG) {
    let g = butterfly_base(b, R, M, S);
    var v = dif_load(g, R, S);
    dft_odd(&v, R);
    dif_store(g, &v, R, S, T);
  }
}
fn dif3(lid: u32, M: u32, S: u32, T: u32) { dif_odd(lid, 3u, M, S, T); }
fn dif5(lid: u32, M: u32, S: u32, T: u32) { dif_odd(lid, 5u, M, S, T); }
fn dif7(lid: u32, M: u32, S: u32, T: u32) { dif_odd(lid, 7u, M, S, T); }

#if BLUE
// The inverse of a dif pass times R: x_r = conj(DFT_R(conj(y_q) w_M^(jq)))_r. Bluestein's
// convolution length is a power of two: radix 8, 4, 2 only.
fn dit_load(g: vec3<u32>, R: u32, S: u32, T: u32) -> array<vec2<f32>, 8> {
  var v: array<vec2<f32>, 8>;
  for (var q = 0u; q < R; q++) { v[q] = cmul(conj(sm[sidx(g.x, g.y + q * S)]), tab[p.tw_off + g.z * q * T]); }
  return v;
}
fn dit_store(g: vec3<u32>, v: ptr<function, array<vec2<f32>, 8>>, R: u32, S: u32) {
  for (var r = 0u; r < R; r++) { sm[sidx(g.x, g.y + r * S)] = conj((*v)[r]); }
}
fn dit8(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 8u; b += WG) {
    let g = butterfly_base(b, 8u, M, S);
    var v = dit_load(g, 8u, S, T);
    dft8(&v);
    dit_store(g, &v, 8u, S);
  }
}
fn dit4(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 4u; b += WG) {
    let g = butterfly_base(b, 4u, M, S);
    var v = dit_load(g, 4u, S, T);
    dft4(&v);
    dit_store(g, &v, 4u, S);
  }
}
fn dit2(lid: u32, M: u32, S: u32, T: u32) {
  for (var b = lid; b < C * L / 2u; b += WG) {
    let g = butterfly_base(b, 2u, M, S);
    var v = dit_load(g, 2u, S, T);
    dft2(&v);
    dit_store(g, &v, 2u, S);
  }
}
#endif

// Where the passes leave frequency k.
fn rev(k0: u32) -> u32 {
  var k = k0;
  var q = 0u;
#if NP > 0
  q += (k % {{R0}}u) * {{S0}}u; k /= {{R0}}u;
#endif
#if NP > 1
  q += (k % {{R1}}u) * {{S1}}u; k /= {{R1}}u;
#endif
#if NP > 2
  q += (k % {{R2}}u) * {{S2}}u; k /= {{R2}}u;
#endif
#if NP > 3
  q += (k % {{R3}}u) * {{S3}}u; k /= {{R3}}u;
#endif
#if NP > 4
  q += (k % {{R4}}u) * {{S4}}u; k /= {{R4}}u;
#endif
#if NP > 5
  q += (k % {{R5}}u) * {{S5}}u; k /= {{R5}}u;
#endif
#if NP > 6
  q += (k % {{R6}}u) * {{S6}}u; k /= {{R6}}u;
#endif
#if NP > 7
  q += (k % {{R7}}u) * {{S7}}u; k /= {{R7}}u;
#endif
#if NP > 8
  q += (k % {{R8}}u) * {{S8}}u; k /= {{R8}}u;
#endif
#if NP > 9
  q += (k % {{R9}}u) * {{S9}}u; k /= {{R9}}u;
#endif
#if NP > 10
  q += (k % {{R10}}u) * {{S10}}u; k /= {{R10}}u;
#endif
#if NP > 11
  q += (k % {{R11}}u) * {{S11}}u; k /= {{R11}}u;
#endif
  return q;
}

@compute @workgroup_size({{WG}})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let g0 = (wid.x + wid.y * nwg.x) * C;
  for (var e = lid; e < C * L; e += WG) {
#if LOAD_LF
    let line = e % C;
    let i = e / C;
#else
    let line = e / L;
    let i = e % L;
#endif
    sm[sidx(line, i)] = load(g0 + line, i);
  }
  workgroupBarrier();
#if NP > 0
  dif{{R0}}(lid, {{M0}}u, {{S0}}u, {{T0}}u);
  workgroupBarrier();
#endif
#if NP > 1
  dif{{R1}}(lid, {{M1}}u, {{S1}}u, {{T1}}u);
  workgroupBarrier();
#endif
#if NP > 2
  dif{{R2}}(lid, {{M2}}u, {{S2}}u, {{T2}}u);
  workgroupBarrier();
#endif
#if NP > 3
  dif{{R3}}(lid, {{M3}}u, {{S3}}u, {{T3}}u);
  workgroupBarrier();
#endif
#if NP > 4
  dif{{R4}}(lid, {{M4}}u, {{S4}}u, {{T4}}u);
  workgroupBarrier();
#endif
#if NP > 5
  dif{{R5}}(lid, {{M5}}u, {{S5}}u, {{T5}}u);
  workgroupBarrier();
#endif
#if NP > 6
  dif{{R6}}(lid, {{M6}}u, {{S6}}u, {{T6}}u);
  workgroupBarrier();
#endif
#if NP > 7
  dif{{R7}}(lid, {{M7}}u, {{S7}}u, {{T7}}u);
  workgroupBarrier();
#endif
#if NP > 8
  dif{{R8}}(lid, {{M8}}u, {{S8}}u, {{T8}}u);
  workgroupBarrier();
#endif
#if NP > 9
  dif{{R9}}(lid, {{M9}}u, {{S9}}u, {{T9}}u);
  workgroupBarrier();
#endif
#if NP > 10
  dif{{R10}}(lid, {{M10}}u, {{S10}}u, {{T10}}u);
  workgroupBarrier();
#endif
#if NP > 11
  dif{{R11}}(lid, {{M11}}u, {{S11}}u, {{T11}}u);
  workgroupBarrier();
#endif
#if BLUE
  for (var e = lid; e < C * L; e += WG) {
#if LOAD_LF
    let i = e / C;
#else
    let i = e % L;
#endif
    sm[e] = cmul(sm[e], tab[p.spec_off + i]);
  }
  workgroupBarrier();
#if NP > 11
  dit{{R11}}(lid, {{M11}}u, {{S11}}u, {{T11}}u);
  workgroupBarrier();
#endif
#if NP > 10
  dit{{R10}}(lid, {{M10}}u, {{S10}}u, {{T10}}u);
  workgroupBarrier();
#endif
#if NP > 9
  dit{{R9}}(lid, {{M9}}u, {{S9}}u, {{T9}}u);
  workgroupBarrier();
#endif
#if NP > 8
  dit{{R8}}(lid, {{M8}}u, {{S8}}u, {{T8}}u);
  workgroupBarrier();
#endif
#if NP > 7
  dit{{R7}}(lid, {{M7}}u, {{S7}}u, {{T7}}u);
  workgroupBarrier();
#endif
#if NP > 6
  dit{{R6}}(lid, {{M6}}u, {{S6}}u, {{T6}}u);
  workgroupBarrier();
#endif
#if NP > 5
  dit{{R5}}(lid, {{M5}}u, {{S5}}u, {{T5}}u);
  workgroupBarrier();
#endif
#if NP > 4
  dit{{R4}}(lid, {{M4}}u, {{S4}}u, {{T4}}u);
  workgroupBarrier();
#endif
#if NP > 3
  dit{{R3}}(lid, {{M3}}u, {{S3}}u, {{T3}}u);
  workgroupBarrier();
#endif
#if NP > 2
  dit{{R2}}(lid, {{M2}}u, {{S2}}u, {{T2}}u);
  workgroupBarrier();
#endif
#if NP > 1
  dit{{R1}}(lid, {{M1}}u, {{S1}}u, {{T1}}u);
  workgroupBarrier();
#endif
#if NP > 0
  dit{{R0}}(lid, {{M0}}u, {{S0}}u, {{T0}}u);
  workgroupBarrier();
#endif
#endif
  for (var e = lid; e < C * L; e += WG) {
#if STORE_LF
    let line = e % C;
    let k = e / C;
#else
    let line = e / L;
    let k = e % L;
#endif
    let g = g0 + line;
#if BLUE
    var v = cmul(sm[sidx(line, k)], tab[p.chirp_off + k]);
#else
    var v = sm[sidx(line, rev(k))];
#endif
#if TWIDDLE
    v = cmul(v, four_step_root((g % COLS) * k));
#endif
    store(g, k, v);
  }
}
