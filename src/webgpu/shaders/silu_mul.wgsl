// y = silu(a) * b elementwise on contiguous operands (the SwiGLU gate). Defines: ENABLE, T.
{{ENABLE}}

struct Params { n: u32, a_off: u32, b_off: u32, pad0: u32, }

@group(0) @binding(0) var<storage, read> a: array<{{T}}>;
@group(0) @binding(1) var<storage, read> b: array<{{T}}>;
@group(0) @binding(2) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = (wid.x + wid.y * nwg.x) * 256u + lid;
  if (e >= p.n) { return; }
  let x = f32(a[p.a_off + e]);
  y[e] = {{T}}(x / (1.0 + exp(-x)) * f32(b[p.b_off + e]));
}
