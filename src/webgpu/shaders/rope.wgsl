// RoPE on a contiguous [.., seq, H, D] tensor (formula in docs/transformer.md), f32 or packed
// f16 (ew_f16) in and out. Entry point ew_main: one invocation per output word, so the two
// halves of an f16 word are written by one invocation. Defines: F16 (x and y are f16),
// OUT_PW (1 for f32, 2 for f16), HAS_POS (positions buffer bound; otherwise the launcher
// binds x there and the position of row s is pos_offset + s), P_BIND (3, or 4 after the freq
// factors at 3: see rope_common).
#include "ew_f16"
#include "rope_common"

struct Params {
  n: u32, seq: u32, out_off: u32, heads: u32,
  d: u32, n_rot: u32, neox: u32, pos_offset: u32,
  base_log2: f32, freq_scale: f32, x_off: u32, f_off: u32,
}

const F16: bool = {{F16}};
const HAS_POS: bool = {{HAS_POS}};

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> pos: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

fn ld_x(i: u32) -> f32 {
  if (F16) { return f16_at(x[i >> 1u], i); }
  return bitcast<f32>(x[i]);
}

fn compute_bits(e: u32) -> u32 {
  let p = params;
  let di = e % p.d;
  let row = e / p.d;
  var val: f32;
  if (di >= p.n_rot) {
    val = ld_x(p.x_off + e);
  } else {
    let s = (row / p.heads) % p.seq;
    var position = f32(p.pos_offset + s);
    if (HAS_POS) { position = f32(pos[s]); }
    let pl = rope_place(di, p.n_rot, p.neox != 0u);
    let rb = p.x_off + row * p.d;
    val = rope_value(ld_x(rb + di), ld_x(rb + pl.y), pl, rope_theta(position, pl.x, p.n_rot, p.freq_scale, p.base_log2));
  }
  if (F16) { return f16_bits(val); }
  return bitcast<u32>(val);
}
#include "ew_main"
