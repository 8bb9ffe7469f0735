// RoPE on a contiguous [.., seq, H, D] tensor, one invocation per output element (formula in
// docs/transformer.md). Defines: ENABLE, T (element type), HAS_POS (positions buffer bound;
// otherwise the launcher binds x there and the position of row s is pos_offset + s).
{{ENABLE}}

struct Params {
  n: u32, seq: u32, heads: u32, d: u32,
  n_rot: u32, neox: u32, pos_offset: u32, x_off: u32,
  base_log2: f32, freq_scale: f32, pad0: u32, pad1: u32,
}

const HAS_POS: bool = {{HAS_POS}};

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read> pos: array<i32>;
@group(0) @binding(2) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = (wid.x + wid.y * nwg.x) * 256u + lid;
  if (e >= p.n) { return; }
  let di = e % p.d;
  let row = e / p.d;
  if (di >= p.n_rot) {
    y[e] = x[p.x_off + e];
    return;
  }
  let s = (row / p.heads) % p.seq;
  var position = f32(p.pos_offset + s);
  if (HAS_POS) { position = f32(pos[s]); }
  let half = p.n_rot / 2u;
  var i: u32;
  var first: bool;
  var partner: u32;
  if (p.neox != 0u) {
    first = di < half;
    i = select(di - half, di, first);
    partner = select(di - half, di + half, first);
  } else {
    first = (di & 1u) == 0u;
    i = di / 2u;
    partner = di ^ 1u;
  }
  // base^(-2i/n_rot) through exp2 with log2(base) computed on the host in double.
  let theta = position * p.freq_scale * exp2(-2.0 * f32(i) / f32(p.n_rot) * p.base_log2);
  let c = cos(theta);
  let sn = sin(theta);
  let rb = p.x_off + row * p.d;
  let a = f32(x[rb + select(partner, di, first)]);
  let b = f32(x[rb + select(di, partner, first)]);
  y[e] = {{T}}(select(a * sn + b * c, a * c - b * sn, first));
}
