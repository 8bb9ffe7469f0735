// Byte-level access to packed GGUF blocks held in `w: array<u32>` (declared by the including
// shader), plus the block constants of the format (QK, Q_BLOCK_BYTES, Q_OFF_*, Q_SUB, Q_ZERO),
// generated from src/quant/blocks.hpp and injected through the QCONST define.
{{QCONST}}

fn byte_at(off: u32) -> u32 {
  return (w[off >> 2u] >> ((off & 3u) * 8u)) & 0xFFu;
}
// Signed byte (Q6_K scales).
fn i8_at(off: u32) -> f32 {
  return f32((bitcast<i32>(byte_at(off)) << 24u) >> 24u);
}
// fp16 at an even byte offset (never straddles a word).
fn half_at(off: u32) -> f32 {
  return unpack2x16float((w[off >> 2u] >> ((off & 2u) * 8u)) & 0xFFFFu).x;
}
// Four bytes at an even byte offset. Blocks of 18, 34 and 210 bytes leave every other block
// 2 bytes into a word; the realigning read touches only words that hold requested bytes.
fn u32_at(off: u32) -> u32 {
  let i = off >> 2u;
  if ((off & 2u) == 0u) { return w[i]; }
  return (w[i] >> 16u) | (w[i + 1u] << 16u);
}
// Sixteen bytes at an even byte offset: 4 word loads when aligned, 5 otherwise.
fn words4(off: u32) -> vec4<u32> {
  let i = off >> 2u;
  if ((off & 2u) == 0u) { return vec4<u32>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]); }
  let a = vec4<u32>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  let b = vec4<u32>(w[i + 1u], w[i + 2u], w[i + 3u], w[i + 4u]);
  return (a >> vec4<u32>(16u)) | (b << vec4<u32>(16u));
}
// Q4_K/Q5_K: 6-bit scale and min of sub-block j, scales at byte offset s
// (layout: unpack_scale_min_k in src/quant/blocks.hpp).
fn scale_min_k(s: u32, j: u32) -> vec2<f32> {
  if (j < 4u) {
    return vec2<f32>(f32(byte_at(s + j) & 63u), f32(byte_at(s + j + 4u) & 63u));
  }
  let sc = (byte_at(s + j + 4u) & 0xFu) | ((byte_at(s + j - 4u) >> 6u) << 4u);
  let mn = (byte_at(s + j + 4u) >> 4u) | ((byte_at(s + j) >> 6u) << 4u);
  return vec2<f32>(f32(sc), f32(mn));
}
// Q8_0: the 32 int8 codes of the block at byte offset off, 4 per u32 (little-endian).
// Blocks are 34 bytes, so qs starts 2 or 0 bytes into a word: read 9 words and realign.
fn q8_words(off: u32) -> array<u32, 8> {
  let w0 = (off + 2u) >> 2u;
  let sh = ((off + 2u) & 3u) * 8u;  // 0 or 16
  var out: array<u32, 8>;
  for (var i = 0u; i < 8u; i = i + 1u) {
    if (sh == 0u) {
      out[i] = w[w0 + i];
    } else {
      out[i] = (w[w0 + i] >> sh) | (w[w0 + i + 1u] << (32u - sh));
    }
  }
  return out;
}
// The four int8 of a u32 (little-endian) as floats; shifts instead of unpack4xI8 so that no
// WGSL language extension is needed.
fn i8x4(v: u32) -> vec4<f32> {
  let s = bitcast<i32>(v);
  return vec4<f32>(f32((s << 24u) >> 24u), f32((s << 16u) >> 24u), f32((s << 8u) >> 24u), f32(s >> 24u));
}
// The four bytes of v, each shifted right by `sh` and masked, as floats (nibbles, 2-bit
// high parts, single bits).
fn bytes_bits(v: u32, sh: u32, mask: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(v, v >> 8u, v >> 16u, v >> 24u) >> vec4<u32>(sh)) & vec4<u32>(mask));
}
fn pack8(a: vec4<f32>, b: vec4<f32>) -> array<f32, 8> {
  return array<f32, 8>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}
// Branch-free reads of 4, 8 and 16 bytes at an even byte offset, for the streaming matvec:
// neighbouring lanes alternate between aligned and realigned blocks (18-, 34- and 210-byte
// formats), so a branch would make every warp run both paths. Each reads the words from
// off >> 2 up to the word holding the last byte ((off + n - 1) >> 2, equal to the previous
// word when aligned: never past the bytes requested, so never past the buffer), then picks.
fn bytes4_at(off: u32) -> u32 {
  let a = w[off >> 2u];
  let b = w[(off + 3u) >> 2u];
  return select(a, (a >> 16u) | (b << 16u), (off & 2u) != 0u);
}
fn bytes8_at(off: u32) -> vec2<u32> {
  let i = off >> 2u;
  let a = vec2<u32>(w[i], w[i + 1u]);
  let b = vec2<u32>(a.y, w[(off + 7u) >> 2u]);
  return select(a, (a >> vec2<u32>(16u)) | (b << vec2<u32>(16u)), (off & 2u) != 0u);
}
fn bytes16_at(off: u32) -> vec4<u32> {
  let i = off >> 2u;
  let a = vec4<u32>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  let b = vec4<u32>(a.yzw, w[(off + 15u) >> 2u]);
  return select(a, (a >> vec4<u32>(16u)) | (b << vec4<u32>(16u)), (off & 2u) != 0u);
}
// Q4_K/Q5_K: (scale 2c, scale 2c+1, min 2c, min 2c+1) from the three 12-byte scale words
// s0, s1, s2 (layout: unpack_scale_min_k in src/quant/blocks.hpp): both sub-blocks of a
// pair sit in the same 16-bit half of each word, so the pair decodes with a few shifts.
fn scale_min_pair_k(s0: u32, s1: u32, s2: u32, c: u32) -> vec4<f32> {
  let sh = 16u * (c & 1u);
  let a = (s0 >> sh) & 0xFFFFu;
  let m = (s1 >> sh) & 0xFFFFu;
  let e = (s2 >> sh) & 0xFFFFu;
  // sub-blocks 0..3: 6 bits of bytes j (scale) and j + 4 (min); 4..7: a nibble of byte j + 4
  // and the top 2 bits of bytes j - 4 (scale) and j (min).
  let sc = select((e & 0x0F0Fu) | ((a >> 2u) & 0x3030u), a & 0x3F3Fu, c < 2u);
  let mn = select(((e >> 4u) & 0x0F0Fu) | ((m >> 2u) & 0x3030u), m & 0x3F3Fu, c < 2u);
  return vec4<f32>(f32(sc & 0xFFu), f32(sc >> 8u), f32(mn & 0xFFu), f32(mn >> 8u));
}
// Q6_K: the int8 scales of quarters 0..3 of a half at column sub-block j (0 or 1), the half's
// scales starting at byte offset so: bytes j, j + 2, j + 4, j + 6, i.e. bytes j and j + 2 of
// two words, each moved to the top byte and sign-extended.
fn q6k_scales4(so: u32, j: u32) -> vec4<f32> {
  let sa = bytes4_at(so);
  let sb = bytes4_at(so + 4u);
  let sh = 8u * j;
  let sv = bitcast<vec4<i32>>(vec4<u32>(sa << (24u - sh), sa << (8u - sh), sb << (24u - sh), sb << (8u - sh)));
  return vec4<f32>(sv >> vec4<u32>(24u));
}
// Bits i..i+3 of h as 0 / 1 (Q5_0 / Q5_1: bit j of the qh word is bit 4 of element j's code).
fn bits4(h: u32, i: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(h) >> (vec4<u32>(0u, 1u, 2u, 3u) + vec4<u32>(i))) & vec4<u32>(1u));
}
