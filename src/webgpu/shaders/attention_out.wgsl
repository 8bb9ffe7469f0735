// Output store of the attention kernels that write the result (prefill, decode_reduce):
// the includer declares `o: array<atomic<u32>>` and `const O_F16: bool`.
#include "ew_f16"

// Output element i (f32, or packed f16 when O_F16). Output words are atomics because with f16
// two invocations, possibly of different workgroups (an odd head_dim puts rows of two heads
// in one word), write the two halves of a word: each clears and sets only its own half, and
// And/Or on disjoint bits commute. The output is O(lq * heads * D), negligible next to the
// K/V traffic, so the f32 path shares the atomic binding (a relaxed atomicStore).
fn store_o(i: u32, val: f32) {
  if (O_F16) {
    let sh = (i & 1u) * 16u;
    atomicAnd(&o[i >> 1u], ~(0xffffu << sh));
    atomicOr(&o[i >> 1u], f16_bits(val) << sh);
  } else {
    atomicStore(&o[i], bitcast<u32>(val));
  }
}
