// Bit-exact copy of a contiguous byte range as vec4<u32> (16 bytes per invocation), used by
// Copy when input and output are contiguous, 16-byte aligned and a multiple of 16 bytes long
// (launcher: kernels/copy_fast.cpp). Offsets and count are in vec4 units.
struct Params { n: u32, in_off: u32, out_off: u32, pad: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 256u;
  if (i < p.n) { y[p.out_off + i] = x[p.in_off + i]; }
}
