// KV-cache append: converts n contiguous source elements into the cache buffer starting at
// element dst_off (the first free row). Defines: ENABLE, TS (source type), TC (cache type).
{{ENABLE}}

struct Params { n: u32, dst_off: u32, src_off: u32, pad0: u32, }

@group(0) @binding(0) var<storage, read_write> cache: array<{{TC}}>;
@group(0) @binding(1) var<storage, read> src: array<{{TS}}>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let e = (wid.x + wid.y * nwg.x) * 256u + lid;
  if (e >= p.n) { return; }
  cache[p.dst_off + e] = {{TC}}(f32(src[p.src_off + e]));
}
