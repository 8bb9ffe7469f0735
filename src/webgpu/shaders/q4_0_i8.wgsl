// Q4_0 part of the 8-bit-x streaming matvec (q_mv_stream_i8): one lane per 18-byte block,
// read as the 5 words from its first byte's word on (d in the low or high half of the first,
// the 16 code bytes realigned branch-free). Low nibbles are elements 0..15, high nibbles
// 16..31, i.e. x groups 2b and 2b + 1; the zero point 8 enters through the groups' code sums:
// d * (sum q*x - 8 * sum x), x as represented by its 8-bit terms (xdot, xsum).
// The weights as words (binding 1), read by the q_bytes helpers.
@group(0) @binding(1) var<storage, read> w: array<u32>;
const I8_PARTS: u32 = 1u;
fn i8_dot(blk: u32, b: u32, part: u32) -> f32 {
  let i = blk >> 2u;
  let w0 = w[i];
  let a = vec4<u32>(w[i + 1u], w[i + 2u], w[i + 3u], w[i + 4u]);
  let odd = (blk & 2u) != 0u;
  let c = select((vec4<u32>(w0, a.xyz) >> vec4<u32>(16u)) | (a << vec4<u32>(16u)), a, odd);
  let d = unpack2x16float(select(w0, w0 >> 16u, odd) & 0xFFFFu).x;
  let lo = c & vec4<u32>(0x0F0F0F0Fu);
  let hi = (c >> vec4<u32>(4u)) & vec4<u32>(0x0F0F0F0Fu);
  let g = 2u * b;
  return d * (xdot(lo, g) + xdot(hi, g + 1u) - f32(Q_ZERO) * (xsum(g) + xsum(g + 1u)));
}
