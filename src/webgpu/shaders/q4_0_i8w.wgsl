// Q4_0 part of the coalesced 8-bit-x matvec (q_mv_stream_i8w). x is quantized per 16 values
// as in q_mv_stream_i8 (a block's low nibbles are its elements 0..15, the high ones 16..31, so
// every word's low / high nibbles meet one x group each) and staged in byte space twice: the
// codes of elements 0..15 of block j at its code bytes (xlo), those of 16..31 (xhi), zeros
// under d. An even block starts on a word (its codes 2 bytes into the words), an odd one
// 2 bytes into one. Per block: d * (s_lo * sum lo + s_hi * sum hi - 8 * sum x), the zero-point
// term taken by the lane whose 16-byte word holds the block's first byte.
const_assert Q_BLOCK_BYTES == 18u && Q_OFF_D == 0u && Q_OFF_QS == 2u;
var<workgroup> xlo: array<vec4<u32>, NV>;
var<workgroup> xhi: array<vec4<u32>, NV>;
var<workgroup> xlo2: array<vec4<u32>, select(1u, NV, X2)>;  // X2: the residual's codes
var<workgroup> xhi2: array<vec4<u32>, select(1u, NV, X2)>;
// Per block: (scale of the low-nibble dots, of the high-nibble dots, 8 * sum of its x).
var<workgroup> xg: array<vec4<f32>, KC / QK>;

struct XV {
  lo: vec4<u32>,
  hi: vec4<u32>,
  lo2: vec4<u32>,
  hi2: vec4<u32>,
};
fn x_words(v: u32) -> XV {
  var r: XV;
  r.lo = xlo[v];
  r.hi = xhi[v];
  if (X2) {
    r.lo2 = xlo2[v];
    r.hi2 = xhi2[v];
  }
  return r;
}

// Word i of byte-space array `which`: 0 xlo, 1 xhi, with X2 2 xlo2, 3 xhi2.
fn put_word(which: u32, i: u32, v: u32) {
  switch which {
    case 0u: { xlo[i >> 2u][i & 3u] = v; }
    case 1u: { xhi[i >> 2u][i & 3u] = v; }
    case 2u: { if (X2) { xlo2[i >> 2u][i & 3u] = v; } }
    default: { if (X2) { xhi2[i >> 2u][i & 3u] = v; } }
  }
}
// The 4 code words c of a block at byte-space word i0: even blocks shifted by 2 bytes
// (word i0 has d's zeros below, word i0 + 4 the next block's d zeros above), odd ones as is.
fn put_block(which: u32, i0: u32, c: vec4<u32>, even: bool) {
  if (even) {
    put_word(which, i0, c.x << 16u);
    put_word(which, i0 + 1u, (c.x >> 16u) | (c.y << 16u));
    put_word(which, i0 + 2u, (c.y >> 16u) | (c.z << 16u));
    put_word(which, i0 + 3u, (c.z >> 16u) | (c.w << 16u));
    put_word(which, i0 + 4u, c.w >> 16u);
  } else {
    put_word(which, i0, c.x);
    put_word(which, i0 + 1u, c.y);
    put_word(which, i0 + 2u, c.z);
    put_word(which, i0 + 3u, c.w);
  }
}

fn stage_pair(x4: u32, k0: u32, pi: u32) {
  for (var h = 0u; h < 2u; h = h + 1u) {
    let e4 = x4 + (k0 + 64u * pi + 32u * h) / 4u;
    let v0 = array<vec4<f32>, 4>(xload(e4), xload(e4 + 1u), xload(e4 + 2u), xload(e4 + 3u));
    let v1 = array<vec4<f32>, 4>(xload(e4 + 4u), xload(e4 + 5u), xload(e4 + 6u), xload(e4 + 7u));
    let lo = quant16(v0, amax4(v0[0], v0[1], v0[2], v0[3]));
    let hi = quant16(v1, amax4(v1[0], v1[1], v1[2], v1[3]));
    xg[2u * pi + h] = vec4<f32>(lo.scale, hi.scale, f32(Q_ZERO) * (lo.sum + hi.sum), 0.0);
    let i0 = 9u * pi + 5u * h;  // even block: words 0..4 of the pair, odd: 5..8
    put_block(0u, i0, lo.q, h == 0u);
    put_block(1u, i0, hi.q, h == 0u);
    if (X2) {
      put_block(2u, i0, lo.q2, h == 0u);
      put_block(3u, i0, hi.q2, h == 0u);
    }
  }
}

fn vdot(q: vec4<u32>, xv: XV, v: u32, rb: u32) -> f32 {
  let p0 = 16u * v;
  let j0 = p0 / Q_BLOCK_BYTES;
  let bnd = Q_BLOCK_BYTES * (j0 + 1u) - p0;
  let m4 = vec4<u32>(0x0F0F0F0Fu);
  let tl = split_sum(dots2(q & m4, xv.lo, xv.lo2), bnd);
  let th = split_sum(dots2((q >> vec4<u32>(4u)) & m4, xv.hi, xv.hi2), bnd);
  let g0 = xg[j0];
  // block j0's zero-point term here when its first byte is this word's
  let z0 = select(0.0, g0.z, p0 == Q_BLOCK_BYTES * j0);
  var s = blk_d(rb, j0) * (g0.x * tl.x + g0.y * th.x - z0);
  if (bnd < 16u) {
    let g1 = xg[j0 + 1u];
    s = s + blk_d(rb, j0 + 1u) * (g1.x * tl.y + g1.y * th.y - g1.z);
  }
  return s;
}
