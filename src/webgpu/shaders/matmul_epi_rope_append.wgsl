// The rope_append epilogue of matmul_gemv_vec.wgsl (included via EPI_INC, not a kernel): the
// decode step's q/k/v projection (one row of A) followed by KVCache::append_rope, as in
// kernels/nn.cpp's attention_kv_append_rope.wgsl. Output row n of the product is column n of
// qkv = [q (r_qn = H * hd) | k (r_kvn = Hkv * hd) | v (r_kvn)]. The launcher guarantees RB and
// hd even, so an invocation's rows n0 .. n0 + RB - 1 are whole interleaved rotation pairs
// (2i, 2i + 1) of one head. Per pair: q rotated and stored to the output; k stored to the
// output as computed, rotated into the K cache at row r_pos; v stored to the output and to the
// V cache at row r_pos. Dims >= r_nrot are not rotated. The angle and rotation are
// rope_common's, on the f32 value the plain epilogue would store (the unfused path's q and k
// are f32, so nothing is rounded before the rotation); f16 caches get f16_bits, as
// attention_kv_append_rope's to_cache, one whole word per pair (the pair's first element is
// even in the cache: r_kvn and r_pos * r_kvn are even).
// Defines: E_BIND, E_BIND1 (bindings of the K and V caches), CACHE_F16, and rope_common's
// (ROPE_FREQS: the freq factors, when present, bound after the caches; offset p.r_f_off).
#include "ew_f16"
#include "rope_common"

@group(0) @binding({{E_BIND}}) var<storage, read_write> kc: array<u32>;
@group(0) @binding({{E_BIND1}}) var<storage, read_write> vc: array<u32>;

const EPI: bool = true;
const CACHE_F16: bool = {{CACHE_F16}};

// Cache elements c, c + 1 (c even) of the V cache (is_v) or the K cache.
fn cache_pair(is_v: bool, c: u32, x: f32, y: f32) {
  if (CACHE_F16) {
    let w = f16_bits(x) | (f16_bits(y) << 16u);
    if (is_v) { vc[c >> 1u] = w; } else { kc[c >> 1u] = w; }
    return;
  }
  if (is_v) {
    vc[c] = bitcast<u32>(x);
    vc[c + 1u] = bitcast<u32>(y);
  } else {
    kc[c] = bitcast<u32>(x);
    kc[c + 1u] = bitcast<u32>(y);
  }
}

// Rows n, n + 1 (n even) with results x, y.
fn epi_pair(o_base: u32, n: u32, x: f32, y: f32) {
  let is_q = n < p.r_qn;
  let is_v = n >= p.r_qn + p.r_kvn;
  let d = n % p.r_hd;  // every part starts at a multiple of hd
  var r = vec2<f32>(x, y);
  if (!is_v && d < p.r_nrot) {
    r = rope_rotate(x, y, rope_theta(f32(p.r_pos), d / 2u, p.r_nrot, p.r_freq_scale, p.r_base_log2));
  }
  if (is_q) {
    st1(o_base + n, r.x);
    st1(o_base + n + 1u, r.y);
    return;
  }
  st1(o_base + n, x);
  st1(o_base + n + 1u, y);
  let c = p.r_pos * p.r_kvn + n - select(p.r_qn, p.r_qn + p.r_kvn, is_v);
  cache_pair(is_v, c, r.x, r.y);
}
