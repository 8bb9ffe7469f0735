// Shared code of the sparse kernels (included, not a kernel): index and value loads from u32
// words and the stores of results. Defines: IW (index words: 1 = i32, 2 = i64 read as its
// low word; construction checks that every index and nnz fit in 31 bits), VT (value type:
// 0 = f32, 1 = f16, 2 = bf16; 16-bit values are packed two per word, low half first).
// Computation is in f32 for every value type.
#include "ew_f16"

const IW: u32 = {{IW}}u;
const VT: u32 = {{VT}}u;

// Element e of a value array, given the word that holds it.
fn val_of(w: u32, e: u32) -> f32 {
  if (VT == 0u) { return bitcast<f32>(w); }
  if (VT == 1u) { return unpack2x16float(w)[e & 1u]; }
  return bitcast<f32>(((w >> (16u * (e & 1u))) & 0xffffu) << 16u);
}
// Word index of element e.
fn word_of(e: u32) -> u32 { return select(e >> 1u, e, VT == 0u); }

// f32 -> bf16 with round to nearest even (quiet NaN keeps its top bits), as the CPU.
fn bf16_bits(f: f32) -> u32 {
  let u = bitcast<u32>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return ((u >> 16u) | 0x40u) & 0xffffu; }
  return ((u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u) & 0xffffu;
}
// The element bits of v in the value type (low 16 bits for 16-bit types).
fn bits_of(v: f32) -> u32 {
  if (VT == 0u) { return bitcast<u32>(v); }
  if (VT == 1u) { return f16_bits(v); }
  return bf16_bits(v);
}
