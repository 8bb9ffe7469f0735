// Copy: strided view -> contiguous output, moving element bits exactly (any dtype of 1, 2,
// 4 or 8 bytes). Bindings: a (source words), out, params. ESIZE = element bytes.
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
#include "ew_common"

fn compute_bits(e: u32) -> u32 {
  let esize = {{ESIZE}}u;
  if (esize == 8u) {
    // Two words per element: e here counts output words, handled as (element, half).
    return a[in_offset(e / 2u, 0u) * 2u + (e % 2u)];
  }
  let src = in_offset(e, 0u);
  let pw = 4u / esize;
  let bits = 8u * esize;
  if (pw == 1u) { return a[src]; }
  return (a[src / pw] >> ((src % pw) * bits)) & ((1u << bits) - 1u);
}
#include "ew_main"
