// Packed f16 helpers shared by the elementwise and transformer kernels (included, not a
// kernel). f16 tensors live in array<u32> (element i = half i % 2 of word i / 2, low half
// first), loaded with the core builtin unpack2x16float and stored with f16_bits, so no kernel
// needs the shader-f16 feature. pack2x16float is not used for stores: WGSL leaves its
// rounding and its result for values outside the f16 range indeterminate, while f16_bits
// matches the CPU's f32_to_f16 bit for bit (overflow -> inf, NaN -> 0x7e00).

// Element i of a packed f16 array, given the word that holds it.
fn f16_at(word: u32, i: u32) -> f32 { return unpack2x16float(word)[i & 1u]; }

// f32 -> f16 with round-to-nearest-even, like the CPU's f32_to_f16 (NaN -> 0x7e00).
fn f16_bits(f: f32) -> u32 {
  let x = bitcast<u32>(f);
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) { return sign | 0x7e00u; }
  if (ax >= 0x477ff000u) { return sign | 0x7c00u; }
  if (ax < 0x38800000u) {
    if (ax < 0x33000000u) { return sign; }
    let e = ax >> 23u;
    let m = (ax & 0x7fffffu) | 0x800000u;
    let s = 126u - e;
    let q = m >> s;
    let rem = m & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    return sign | (q + select(0u, 1u, rem > half || (rem == half && (q & 1u) == 1u)));
  }
  let h = ((ax - 0x38000000u) >> 13u);
  let rest = ax & 0x1fffu;
  return sign | (h + select(0u, 1u, rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)));
}
