// Sources of attention_kv_append_rope.wgsl when q, k and v live in one buffer (slices of a
// fused QKV output): bound once, read_write, since a buffer bound both read_write (for q) and
// read-only in one dispatch is a WebGPU validation error (included; declares binding 2 and
// the params at P_BIND).
@group(0) @binding(2) var<storage, read_write> qkv: array<u32>;
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

fn src_k_word(w: u32) -> u32 { return qkv[w]; }
fn src_v_word(w: u32) -> u32 { return qkv[w]; }
fn q_word(w: u32) -> u32 { return qkv[w]; }
fn q_store(w: u32, bits: u32) { qkv[w] = bits; }
