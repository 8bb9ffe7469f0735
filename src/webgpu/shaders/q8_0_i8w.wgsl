// Q8_0 part of the coalesced 8-bit-x matvec (q_mv_stream_i8w). x is quantized per block (32
// values share one scale, so that a word holding codes 14..17 of a block needs one scale; the
// other sources use groups of 16), and staged in byte space: block j of the chunk at bytes
// 34 j .. 34 j + 33, zeros under d, its 32 codes after. An even block starts on a word (its
// codes 2 bytes into the words: one funnel shift per word), an odd one 2 bytes into one.
// Per 16-byte word: d * (scale of x's block) * sum of the word's dots, per block.
const_assert Q_BLOCK_BYTES == 34u && Q_OFF_D == 0u && Q_OFF_QS == 2u;
var<workgroup> xa: array<vec4<u32>, NV>;
var<workgroup> xb: array<vec4<u32>, select(1u, NV, X2)>;  // X2: the residual's codes
var<workgroup> xs: array<f32, KC / QK>;                   // per block: the scale of its dots

struct XV {
  a: vec4<u32>,
  b: vec4<u32>,
};
fn x_words(v: u32) -> XV {
  var r: XV;
  r.a = xa[v];
  if (X2) { r.b = xb[v]; }
  return r;
}

// Word i of the byte-space x: of the first term (second = false) or, with X2, the residual's.
fn put_word(second: bool, i: u32, v: u32) {
  if (!second) {
    xa[i >> 2u][i & 3u] = v;
  } else if (X2) {
    xb[i >> 2u][i & 3u] = v;
  }
}
// The code words c (4 codes each) of an even block at byte-space word i0: zeros under d, each
// word the upper half of code word t - 1 and the lower half of code word t.
fn put_even(second: bool, i0: u32, c: array<u32, 8>) {
  put_word(second, i0, c[0] << 16u);
  for (var t = 1u; t < 8u; t = t + 1u) { put_word(second, i0 + t, (c[t - 1u] >> 16u) | (c[t] << 16u)); }
  put_word(second, i0 + 8u, c[7] >> 16u);  // the next (odd) block's d bytes: zero
}
fn put_odd(second: bool, i0: u32, c: array<u32, 8>) {
  for (var t = 0u; t < 8u; t = t + 1u) { put_word(second, i0 + t, c[t]); }
}

fn stage_pair(x4: u32, k0: u32, pi: u32) {
  for (var h = 0u; h < 2u; h = h + 1u) {
    let e4 = x4 + (k0 + 64u * pi + 32u * h) / 4u;
    let v0 = array<vec4<f32>, 4>(xload(e4), xload(e4 + 1u), xload(e4 + 2u), xload(e4 + 3u));
    let v1 = array<vec4<f32>, 4>(xload(e4 + 4u), xload(e4 + 5u), xload(e4 + 6u), xload(e4 + 7u));
    let am = max(amax4(v0[0], v0[1], v0[2], v0[3]), amax4(v1[0], v1[1], v1[2], v1[3]));
    let q0 = quant16(v0, am);
    let q1 = quant16(v1, am);
    xs[2u * pi + h] = q0.scale;  // the same for both halves
    let c = array<u32, 8>(q0.q.x, q0.q.y, q0.q.z, q0.q.w, q1.q.x, q1.q.y, q1.q.z, q1.q.w);
    let c2 = array<u32, 8>(q0.q2.x, q0.q2.y, q0.q2.z, q0.q2.w, q1.q2.x, q1.q2.y, q1.q2.z, q1.q2.w);
    if (h == 0u) {
      put_even(false, 17u * pi, c);
      if (X2) { put_even(true, 17u * pi, c2); }
    } else {
      put_odd(false, 17u * pi + 9u, c);
      if (X2) { put_odd(true, 17u * pi + 9u, c2); }
    }
  }
}

fn vdot(q: vec4<u32>, xv: XV, v: u32, rb: u32) -> f32 {
  let p0 = 16u * v;
  let j0 = p0 / Q_BLOCK_BYTES;
  let bnd = Q_BLOCK_BYTES * (j0 + 1u) - p0;
  let t = split_sum(dots2(q, xv.a, xv.b), bnd);
  var s = blk_d(rb, j0) * xs[j0] * t.x;
  if (bnd < 16u) { s = s + blk_d(rb, j0 + 1u) * xs[j0 + 1u] * t.y; }
  return s;
}
