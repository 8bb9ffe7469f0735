// RoPE in place (rope_; formula in docs/transformer.md) through the strides of a view
// [B, seq, H, D] of x, f32 or packed f16 (ew_f16). One invocation per unit of ppu
// consecutive rotation pairs of one row; it reads both elements of each pair before writing
// them, so no other invocation touches its elements. f16 units own whole u32 words (the
// launcher guarantees word-aligned rows and picks ppu so), so the read-modify-write of a
// half never races with a neighbour's. Dims >= n_rot are not written.
// attention_kv_append_rope.wgsl rotates q the same way.
// Defines: F16, POSITIONS (the include that declares the params binding and fn row_position:
// rope_pos_buffer binds an i32 positions buffer, rope_pos_offset uses pos_offset + s), P_BIND
// (the params binding: after the positions and the freq factors of rope_common, if any).
#include "ew_f16"
#include "rope_common"

struct Params {
  units: u32, upr: u32, ppu: u32, seq: u32,
  heads: u32, n_rot: u32, neox: u32, pos_offset: u32,
  base_log2: f32, freq_scale: f32, off: u32, f_off: u32,
  st_b: u32, st_s: u32, st_h: u32, st_d: u32,
}

const F16: bool = {{F16}};

@group(0) @binding(0) var<storage, read_write> x: array<u32>;
#include "{{POSITIONS}}"

fn ld(i: u32) -> f32 {
  if (F16) { return f16_at(x[i >> 1u], i); }
  return bitcast<f32>(x[i]);
}

fn st(i: u32, v: f32) {
  if (F16) {
    let w = i >> 1u;
    let sh = (i & 1u) * 16u;
    x[w] = (x[w] & ~(0xffffu << sh)) | (f16_bits(v) << sh);
    return;
  }
  x[i] = bitcast<u32>(v);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = params;
  let u = gid.x + gid.y * nwg.x * 256u;
  if (u >= p.units) { return; }
  let row = u / p.upr;  // ((b * seq) + s) * heads + h
  let h = row % p.heads;
  let s = (row / p.heads) % p.seq;
  let b = row / (p.heads * p.seq);
  let base = p.off + b * p.st_b + s * p.st_s + h * p.st_h;
  let pos = row_position(s);
  let first = (u % p.upr) * p.ppu;
  for (var k = 0u; k < p.ppu; k = k + 1u) {
    let i = first + k;
    let ab = rope_pair(i, p.n_rot, p.neox != 0u);
    // rope_common, as rope.wgsl: rope_ and rope give the same bits on one adapter.
    let r = rope_rotate(ld(base + ab.x * p.st_d), ld(base + ab.y * p.st_d),
                        rope_theta(pos, i, p.n_rot, p.freq_scale, p.base_log2));
    st(base + ab.x * p.st_d, r.x);
    st(base + ab.y * p.st_d, r.y);
  }
}
