// Shared by the FFT kernels (fft_local, fft_stockham): the params, the bindings, complex
// helpers and the line geometry of plans/fft_plan.hpp (FftStage): line g is column
// c = g % COLS of batch b = g / COLS; the input's element i and the output's element k are
// addressed through the params' offsets and strides. COLS is a literal (the plan knows it:
// 1 for a direct transform, n2 / n1 for the four-step stages) and BIN is `1u` when the batch
// has one inner group, so the common contiguous case compiles to shifts and one multiply-add
// instead of four runtime u32 divisions per element.
struct Params {
  lines: u32, cols: u32, bin: u32, in_len: u32,
  out_len: u32, n_total: u32, in_off: u32, ibh: u32,
  ibl: u32, ic: u32, ie: u32, es: u32,
  out_off: u32, obh: u32, obl: u32, oc: u32,
  oe: u32, tw_off: u32, lo_off: u32, hi_off: u32,
  lo_bits: u32, chirp_off: u32, spec_off: u32, scale: f32,
  conj_in: f32, conj_out: f32, pad0: u32, pad1: u32,  // -1: conjugate (inverse transforms), else 1
}

const COLS: u32 = {{COLS}};

#if IN_MODE == 1
@group(0) @binding(0) var<storage, read> src: array<f32>;
#else
@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
#endif
@group(0) @binding(1) var<storage, read> tab: array<vec2<f32>>;
#if OUT_REAL
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
#else
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;
#endif
@group(0) @binding(3) var<uniform> p: Params;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn conj(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x, -a.y); }
fn mul_mi(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.y, -a.x); }  // a * (-i)

// Offset of batch b's line group: b = bh * bin + bl.
fn batch_off(b: u32, hs: u32, ls: u32) -> u32 {
#if BIN1
  return b * hs;
#else
  return (b / p.bin) * hs + (b % p.bin) * ls;
#endif
}

// Element i of line g (0 past the line or past the last line), conjugated for inverse
// transforms, times the Bluestein chirp.
fn load(g: u32, i: u32) -> vec2<f32> {
  if (g >= p.lines) { return vec2<f32>(0.0); }
  let c = g % COLS;
  let b = g / COLS;
  let base = p.in_off + batch_off(b, p.ibh, p.ibl);
  let n = c + i * COLS;  // index in the whole transform
  var v = vec2<f32>(0.0);
#if IN_MODE == 2
  if (n < p.in_len) {
    v = src[base + n * p.es];
    if (n == 0u || 2u * n == p.n_total) { v.y = 0.0; }
  } else if (n < p.n_total) {
    v = conj(src[base + (p.n_total - n) * p.es]);
  }
#elif IN_MODE == 1
  if (n < p.in_len) { v = vec2<f32>(src[base + c * p.ic + i * p.ie], 0.0); }
#else
  if (n < p.in_len) { v = src[base + c * p.ic + i * p.ie]; }
#endif
  v.y = v.y * p.conj_in;
#if BLUE
  if (n < p.n_total) { v = cmul(v, tab[p.chirp_off + n]); }
#endif
  return v;
}

// Stores frequency k of line g (conjugated for inverse transforms, scaled), unless the line or
// the frequency is past the output.
fn store(g: u32, k: u32, v0: vec2<f32>) {
  if (g >= p.lines) { return; }
  let c = g % COLS;
  let b = g / COLS;
  if (c + k * COLS >= p.out_len) { return; }
  var v = v0;
  v.y = v.y * p.conj_out;
  v = v * p.scale;
  let o = p.out_off + batch_off(b, p.obh, p.obl) + c * p.oc + k * p.oe;
#if OUT_REAL
  dst[o] = v.x;
#else
  dst[o] = v;
#endif
}

// w_n^e of the four-step twiddle from two short tables (low and high bits of e).
fn four_step_root(e: u32) -> vec2<f32> {
  return cmul(tab[p.lo_off + (e & ((1u << p.lo_bits) - 1u))], tab[p.hi_off + (e >> p.lo_bits)]);
}
