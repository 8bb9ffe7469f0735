// Q8_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8): one lane per 34-byte block,
// read as the 9 words from its first byte's word on (d in the low or high half of the first,
// the 32 int8 codes realigned branch-free): d * sum q*x over x groups 2b, 2b + 1.
// The weights as words (binding 1), read by the q_bytes helpers.
@group(0) @binding(1) var<storage, read> w: array<u32>;
const I8_PARTS: u32 = 1u;
fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let i = blk >> 2u;
  let w0 = w[i];
  let a = vec4<u32>(w[i + 1u], w[i + 2u], w[i + 3u], w[i + 4u]);
  let e = vec4<u32>(w[i + 5u], w[i + 6u], w[i + 7u], w[i + 8u]);
  let odd = (blk & 2u) != 0u;
  let sh = vec4<u32>(16u);
  let c0 = select((vec4<u32>(w0, a.xyz) >> sh) | (a << sh), a, odd);
  let c1 = select((vec4<u32>(a.w, e.xyz) >> sh) | (e << sh), e, odd);
  let d = unpack2x16float(select(w0, w0 >> 16u, odd) & 0xFFFFu).x;
  return d * (xdot(c0, 2u * b) + xdot(c1, 2u * b + 1u));
}
