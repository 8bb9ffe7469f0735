// Entry point shared by the elementwise kernels: one invocation per output u32 word, so
// packed sub-word outputs are written without races; words shared with neighbours of the
// output range (nonzero element offset, guard regions) keep those neighbours' bits.
// The including kernel defines OUT_PW (elements per word), fn compute_bits(e) -> u32 (the
// bits of output element e, counted from out_off), the binding `out: array<u32>` and a
// uniform `params` with fields n (output elements) and out_off (element offset in `out`).

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let pw = {{OUT_PW}}u;
  let w = gid.x + gid.y * nwg.x * 256u + params.out_off / pw;
  let end = params.out_off + params.n;
  let e0 = w * pw;
  if (e0 >= end) { return; }
  if (pw == 1u) {
    out[w] = compute_bits(e0 - params.out_off);
    return;
  }
  let bits = 32u / pw;
  var word = 0u;
  if (e0 < params.out_off || e0 + pw > end) { word = out[w]; }
  for (var j = 0u; j < pw; j = j + 1u) {
    let e = e0 + j;
    if (e >= params.out_off && e < end) {
      let mask = ((1u << bits) - 1u) << (j * bits);
      word = (word & ~mask) | ((compute_bits(e - params.out_off) << (j * bits)) & mask);
    }
  }
  out[w] = word;
}
