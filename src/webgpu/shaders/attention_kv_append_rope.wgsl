// KV-cache append with RoPE, one dispatch (the decode step's rope + append): the K rows are
// rotated on their way into the K cache (the source is not written), the V rows copied, and
// q [n, Hq, D] rotated in place through its strides. Row s of the sources has position
// pos_offset + s (the cache row it lands in). One invocation per cache word of K, then per
// cache word of V (as attention_kv_append2.wgsl: the launcher guarantees whole-word rows),
// then per rotation unit of q (as rope_inplace.wgsl: ppu pairs of one row, f16 units owning
// whole words). A K element is computed alone from its pair, with rope_common's expression,
// and rounded to the source dtype before the cache dtype, as rope_ then kv_append would.
// Defines: SRC_F16 (k, v), CACHE_F16, OUT_PW, Q_F16, SOURCES (the include that declares the
// source bindings and params: attention_kv_rope_one when q, k and v share one buffer (the
// fused QKV output, bound once read_write), attention_kv_rope_three otherwise), P_BIND (the
// params binding, after the sources and rope_common's freq factors, if any).
#include "ew_f16"
#include "rope_common"

struct Params {
  words: u32, k_src_off: u32, v_src_off: u32, out_word: u32,
  q_units: u32, upr: u32, ppu: u32, q_heads: u32,
  row: u32, d: u32, n_rot: u32, neox: u32,
  pos_offset: u32, base_log2: f32, freq_scale: f32, q_off: u32,
  st_s: u32, st_h: u32, st_d: u32, f_off: u32,
}

const SRC_F16: bool = {{SRC_F16}};
const CACHE_F16: bool = {{CACHE_F16}};
const Q_F16: bool = {{Q_F16}};
const PW: u32 = {{OUT_PW}}u;

@group(0) @binding(0) var<storage, read_write> out_k: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_v: array<u32>;
#include "{{SOURCES}}"

// Source element i (an element index into src_k or src_v).
fn ld_src(is_v: bool, i: u32) -> f32 {
  var w: u32;
  if (SRC_F16) { w = i >> 1u; } else { w = i; }
  if (is_v) { w = src_v_word(w); } else { w = src_k_word(w); }
  if (SRC_F16) { return f16_at(w, i); }
  return bitcast<f32>(w);
}

fn to_cache(v: f32) -> u32 {
  if (CACHE_F16) { return f16_bits(v); }
  return bitcast<u32>(v);
}

// Cache bits of element e (0-based within the new rows) of V, or of K rotated.
fn cache_bits(is_v: bool, e: u32) -> u32 {
  let p = params;
  if (is_v) { return to_cache(ld_src(true, p.v_src_off + e)); }
  let di = e % p.d;
  if (di >= p.n_rot) { return to_cache(ld_src(false, p.k_src_off + e)); }
  let pl = rope_place(di, p.n_rot, p.neox != 0u);
  let rb = p.k_src_off + e - di;
  let s = e / p.row;
  var v = rope_value(ld_src(false, rb + di), ld_src(false, rb + pl.y), pl,
                     rope_theta(f32(p.pos_offset + s), pl.x, p.n_rot, p.freq_scale, p.base_log2));
  if (SRC_F16) { v = f16_at(f16_bits(v), 0u); }  // the rotated source's own rounding
  return to_cache(v);
}

fn ld_q(i: u32) -> f32 {
  if (Q_F16) { return f16_at(q_word(i >> 1u), i); }
  return bitcast<f32>(q_word(i));
}

fn st_q(i: u32, v: f32) {
  if (Q_F16) {
    let w = i >> 1u;
    let sh = (i & 1u) * 16u;
    q_store(w, (q_word(w) & ~(0xffffu << sh)) | (f16_bits(v) << sh));
    return;
  }
  q_store(i, bitcast<u32>(v));
}

// Rotation unit u of q, as rope_inplace.wgsl's main.
fn rotate_q(u: u32) {
  let p = params;
  let row = u / p.upr;  // s * q_heads + h
  let h = row % p.q_heads;
  let s = row / p.q_heads;
  let base = p.q_off + s * p.st_s + h * p.st_h;
  let pos = f32(p.pos_offset + s);
  let first = (u % p.upr) * p.ppu;
  for (var k = 0u; k < p.ppu; k = k + 1u) {
    let i = first + k;
    let ab = rope_pair(i, p.n_rot, p.neox != 0u);
    let r = rope_rotate(ld_q(base + ab.x * p.st_d), ld_q(base + ab.y * p.st_d),
                        rope_theta(pos, i, p.n_rot, p.freq_scale, p.base_log2));
    st_q(base + ab.x * p.st_d, r.x);
    st_q(base + ab.y * p.st_d, r.y);
  }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = gid.x + gid.y * nwg.x * 256u;
  let w2 = 2u * params.words;
  if (g >= w2) {
    if (g < w2 + params.q_units) { rotate_q(g - w2); }
    return;
  }
  let is_v = g >= params.words;
  let j = g - select(0u, params.words, is_v);
  var word = cache_bits(is_v, j * PW);
  if (PW == 2u) { word = word | (cache_bits(is_v, j * PW + 1u) << 16u); }
  if (is_v) { out_v[params.out_word + j] = word; } else { out_k[params.out_word + j] = word; }
}
