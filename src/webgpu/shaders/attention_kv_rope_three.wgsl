// Sources of attention_kv_append_rope.wgsl when q lives in another buffer than k and v (k and
// v may share one, bound twice read-only) (included; declares bindings 2..4 and the params at
// P_BIND).
@group(0) @binding(2) var<storage, read> src_k: array<u32>;
@group(0) @binding(3) var<storage, read> src_v: array<u32>;
@group(0) @binding(4) var<storage, read_write> q_buf: array<u32>;
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

fn src_k_word(w: u32) -> u32 { return src_k[w]; }
fn src_v_word(w: u32) -> u32 { return src_v[w]; }
fn q_word(w: u32) -> u32 { return q_buf[w]; }
fn q_store(w: u32, bits: u32) { q_buf[w] = bits; }
