// The K-chunk data paths of sgmat_core.wgsl (included by it, not a kernel): A's fetch into
// registers (zeros out of range) and staging into As, the eight-half stores, and the
// ablation's sink. The plan picks the path (SgVariant, plans/tuning.hpp); both paths leave the
// same halves in As / Bs, so the MMA loop does not know which ran. (Whole-fragment copies
// storage -> workgroup memory and B's fragments read straight from storage were tried and
// lost to both on the H200: docs/benchmark-history.md.)
//
// SG_FETCH 0: vec4<f16> loads (8 bytes) and four 16-bit workgroup stores each.
// SG_FETCH 1: vec4<u32> loads (16 bytes: half the load instructions and address arithmetic),
//   split with bitcast<vec2<f16>>; the eight halves go to As / Bs with eight 16-bit stores at a
//   16-byte-aligned index. WGSL offers no wider store into As / Bs: subgroupMatrixLoad of f16
//   fragments takes only an array<f16>, a workgroup variable has exactly one element type, and
//   WGSL has no pointer casts or unions, so no u32 or vec4 view of the staged tiles can exist.
//   Merging the eight stores into one 128-bit store is left to the driver's compiler, which the
//   aligned consecutive indices allow.
// Defines (beyond sgmat_core's): SG_FETCH, ABL.

#if SG_FETCH == 1
const AG: u32 = 8u;  // halves per register element
alias RA = array<vec4<u32>, BM * BK / 8u / NT>;
#else
const AG: u32 = 4u;
alias RA = array<vec4<f16>, LA4>;
#endif
const LAR: u32 = BM * BK / AG / NT;  // register elements of A per invocation per chunk

fn fetch_a(lid: u32, base: u32, m0: u32, k0: u32) -> RA {
  var r: RA;
  for (var i = 0u; i < LAR; i++) {
    let e = lid + i * NT;
    let m = m0 + e / (BK / AG);
    let k = k0 + (e % (BK / AG)) * AG;
    if (m < p.M && k < p.K) { r[i] = a[(base + m * p.a_ms + k) / AG]; }
  }
  return r;
}
fn stage_a(lid: u32, buf: u32, r: ptr<function, RA>) {
  for (var i = 0u; i < LAR; i++) {
    let e = lid + i * NT;
    let at = buf * A_BUF + (e / (BK / AG)) * AST + (e % (BK / AG)) * AG;
#if SG_FETCH == 1
    put8_a(at, (*r)[i]);
#else
    let v = (*r)[i];
    As[at] = v.x; As[at + 1u] = v.y; As[at + 2u] = v.z; As[at + 3u] = v.w;
#endif
  }
}

#if SG_FETCH == 1
// Eight halves (four u32 words, low half first: the storage order) from index `at` on.
fn put8_a(at: u32, v: vec4<u32>) {
  let h0 = bitcast<vec2<f16>>(v.x); let h1 = bitcast<vec2<f16>>(v.y);
  let h2 = bitcast<vec2<f16>>(v.z); let h3 = bitcast<vec2<f16>>(v.w);
  As[at] = h0.x; As[at + 1u] = h0.y; As[at + 2u] = h1.x; As[at + 3u] = h1.y;
  As[at + 4u] = h2.x; As[at + 5u] = h2.y; As[at + 6u] = h3.x; As[at + 7u] = h3.y;
}
fn put8_b(at: u32, v: vec4<u32>) {
  let h0 = bitcast<vec2<f16>>(v.x); let h1 = bitcast<vec2<f16>>(v.y);
  let h2 = bitcast<vec2<f16>>(v.z); let h3 = bitcast<vec2<f16>>(v.w);
  Bs[at] = h0.x; Bs[at + 1u] = h0.y; Bs[at + 2u] = h1.x; Bs[at + 3u] = h1.y;
  Bs[at + 4u] = h2.x; Bs[at + 5u] = h2.y; Bs[at + 6u] = h3.x; Bs[at + 7u] = h3.y;
}
#endif

#if ABL == 1
// The ablation without staging stores keeps the fetches alive: the fetched words are folded
// into one u32 that decides a store after the loop, so the compiler cannot drop the loads.
#if SG_FETCH == 1
fn fold(v: vec4<u32>) -> u32 { return v.x ^ v.y ^ v.z ^ v.w; }
#else
fn fold(v: vec4<f16>) -> u32 { return bitcast<u32>(v.xy) ^ bitcast<u32>(v.zw); }
#endif
fn fold_regs(ra: ptr<function, RA>, rb: ptr<function, RB>) -> u32 {
  var x = 0u;
  for (var i = 0u; i < LAR; i++) { x ^= fold((*ra)[i]); }
  for (var i = 0u; i < LBR; i++) { x ^= fold((*rb)[i]); }
  return x;
}
#endif
