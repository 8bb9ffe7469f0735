// KV-cache append of K and V in one dispatch (a decode step's rows of both caches): one
// invocation per output u32 word of either cache, the first `words` invocations writing K, the
// rest V. The launcher uses it only when the rows start and end on whole words (out_off and n
// multiples of OUT_PW), so no word is shared with a neighbouring row; otherwise it runs
// attention_kv_append once per cache. The sources may be one buffer (slices of a fused QKV
// output), bound twice read-only. Defines: SRC_F16, CACHE_F16, OUT_PW.
#include "ew_f16"

struct Params { words: u32, k_src_off: u32, v_src_off: u32, out_word: u32, }

const SRC_F16: bool = {{SRC_F16}};
const CACHE_F16: bool = {{CACHE_F16}};
const PW: u32 = {{OUT_PW}}u;

@group(0) @binding(0) var<storage, read_write> out_k: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_v: array<u32>;
@group(0) @binding(2) var<storage, read> src_k: array<u32>;
@group(0) @binding(3) var<storage, read> src_v: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

fn src_word(is_v: bool, i: u32) -> u32 {
  if (is_v) { return src_v[i]; }
  return src_k[i];
}

// Bits of source element i (an element index into src_k or src_v) in the cache's dtype.
fn cache_bits(is_v: bool, i: u32) -> u32 {
  var v: f32;
  if (SRC_F16) { v = f16_at(src_word(is_v, i >> 1u), i); } else { v = bitcast<f32>(src_word(is_v, i)); }
  if (CACHE_F16) { return f16_bits(v); }
  return bitcast<u32>(v);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * nwg.x * 256u;
  if (g >= 2u * params.words) { return; }
  let is_v = g >= params.words;
  let j = g - select(0u, params.words, is_v);
  let e0 = select(params.k_src_off, params.v_src_off, is_v) + j * PW;
  var word = cache_bits(is_v, e0);
  if (PW == 2u) { word = word | (cache_bits(is_v, e0 + 1u) << 16u); }
  if (is_v) { out_v[params.out_word + j] = word; } else { out_k[params.out_word + j] = word; }
}
