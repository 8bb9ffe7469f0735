// KV-cache append: converts n contiguous source elements into the cache buffer (binding
// `out`) starting at element out_off (the first free row). Either side is f32 or packed f16
// (ew_f16); entry point ew_main writes whole cache words, keeping the half of a boundary word
// that belongs to the neighbouring row. Defines: SRC_F16, CACHE_F16, OUT_PW.
#include "ew_f16"

struct Params { n: u32, src_off: u32, out_off: u32, pad0: u32, }

const SRC_F16: bool = {{SRC_F16}};
const CACHE_F16: bool = {{CACHE_F16}};

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn compute_bits(e: u32) -> u32 {
  let i = params.src_off + e;
  var v: f32;
  if (SRC_F16) { v = f16_at(src[i >> 1u], i); } else { v = bitcast<f32>(src[i]); }
  if (CACHE_F16) { return f16_bits(v); }
  return bitcast<u32>(v);
}
#include "ew_main"
