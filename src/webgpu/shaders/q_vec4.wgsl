// Weights bound as 16-byte words (binding 1) for the i8 parts that read them with vec4 loads
// (q4_0_i8, q8_0_i8, q4_k_i8). Why: a lane reads one block (or a part of one) and the 32 lanes
// of a warp read 32 different blocks, so every warp-wide load instruction touches the same
// ~9 cache lines of the warp's span again (Q8_0: 32 x 34 bytes); the H200 ran those kernels
// bound by such L1 passes, not by DRAM. Three 16-byte loads instead of nine word loads cut the
// passes by as much. The launcher binds every buffer rounded up to 16 bytes (the pool's
// capacities are multiples of 16), so a block's last bytes are addressable; wv4 clamps an
// index to the binding, since a window of 16-byte words may reach past the last block.
@group(0) @binding(1) var<storage, read> wv: array<vec4<u32>>;
var<private> w: array<u32, 1>;  // the q_bytes helpers compile against it; the parts never call them
fn wv4(i: u32) -> vec4<u32> { return wv[min(i, arrayLength(&wv) - 1u)]; }

// The 16-bit value at an even byte offset (one word load).
fn half_bits(off: u32) -> u32 { return (wv[off >> 4u][(off >> 2u) & 3u] >> ((off & 2u) * 8u)) & 0xFFFFu; }
// Word j (0..3) of a.
fn word_of(a: vec4<u32>, j: u32) -> u32 {
  return select(select(a.x, a.y, (j & 1u) != 0u), select(a.z, a.w, (j & 1u) != 0u), (j & 2u) != 0u);
}
// Words j .. j + 3 (j in 0..3) of the 8 words a, b.
fn words_from(a: vec4<u32>, b: vec4<u32>, j: u32) -> vec4<u32> {
  let odd = (j & 1u) != 0u;
  let s0 = select(a, vec4<u32>(a.yzw, b.x), odd);
  let s2 = select(vec4<u32>(a.zw, b.xy), vec4<u32>(a.w, b.xyz), odd);
  return select(s0, s2, (j & 2u) != 0u);
}
// The 4 words that start 2 bytes into words v and the word after it (nx): bytes realigned
// across word boundaries, for data at an offset that is 2 modulo 4.
fn shift16(v: vec4<u32>, nx: u32) -> vec4<u32> {
  return (v >> vec4<u32>(16u)) | (vec4<u32>(v.yzw, nx) << vec4<u32>(16u));
}
