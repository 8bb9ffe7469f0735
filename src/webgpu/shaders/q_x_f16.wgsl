// x [M, K] f32 -> xh [M, K] f16 for the quantized prefill on subgroup matrices, each row scaled
// by a power of two so that its largest finite |x| lands in [2^14, 2^15): f16's range (65504)
// cannot overflow whatever the row's magnitude, and its 11-bit precision is relative to the
// row. rs[m] = 2^-e undoes the scale exactly on the product's row m. NaN and inf stay NaN and
// inf (they do not enter the maximum). One workgroup per row.
// Bindings: x (vec4), xh (vec4<f16>), rs, params.
enable f16;

struct Params {
  m: u32,
  k4: u32,      // K / 4
  x_off4: u32,  // x's offset in vec4 units
  pad: u32,
};
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> xh: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read_write> rs: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

#include "fdiv"

const WG: u32 = 256u;
var<workgroup> amax: atomic<u32>;

// |v| as bits where finite, else 0: finite non-negative floats order like their bits.
fn finite_abs_bits(v: vec4<f32>) -> vec4<u32> {
  let b = bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu);
  return select(vec4<u32>(0u), b, b < vec4<u32>(0x7f800000u));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (lid == 0u) { atomicStore(&amax, 0u); }
  workgroupBarrier();
  let base = params.x_off4 + row * params.k4;
  var mb = 0u;
  if (row < params.m) {
    for (var i = lid; i < params.k4; i += WG) {
      let b = finite_abs_bits(x[base + i]);
      mb = max(mb, max(max(b.x, b.y), max(b.z, b.w)));
    }
  }
  atomicMax(&amax, mb);
  workgroupBarrier();
  let top = atomicLoad(&amax);
  if (row >= params.m) { return; }
  // e = 14 - exponent of the largest |x| (0 for an all-zero row), kept where 2^e is normal.
  let e = select(clamp(14 - f32_expo(bitcast<f32>(top)), -126, 126), 0, top == 0u);
  let s = f32_pow2(e);
  for (var i = lid; i < params.k4; i += WG) { xh[row * params.k4 + i] = vec4<f16>(x[base + i] * s); }
  if (lid == 0u) { rs[row] = f32_pow2(-e); }
}
