// The K-chunk data paths of sgmat_core.wgsl (included by it, not a kernel): A's fetch into
// registers and staging into As, the eight-half stores, the whole-fragment copy of either
// operand, and the ablation's sink. The plan picks the path (SgVariant, plans/tuning.hpp);
// every path must leave the same halves in As / Bs, so the MMA loop does not know which ran.
//
// SG_FETCH 0: vec4<f16> loads (8 bytes) and four 16-bit workgroup stores each.
// SG_FETCH 1: vec4<u32> loads (16 bytes: half the load instructions and address arithmetic),
//   split with bitcast<vec2<f16>>; the eight halves go to As / Bs with eight 16-bit stores at a
//   16-byte-aligned index. WGSL offers no wider store into As / Bs: subgroupMatrixLoad of f16
//   fragments takes only an array<f16>, a workgroup variable has exactly one element type, and
//   WGSL has no pointer casts or unions, so no u32 or vec4 view of the staged tiles can exist.
//   Merging the eight stores into one 128-bit store is left to the driver's compiler, which the
//   aligned consecutive indices allow.
// SG_FETCH 2: whole fragments. Each subgroup subgroupMatrixLoads CA fragments of A's chunk (and
//   CB of B's unless B_DIRECT) straight from storage (the array<f16> aliases a_h, b_h) and
//   subgroupMatrixStores them into As / Bs: the only way WGSL lets the driver choose the width
//   of the workgroup stores. A fragment load has no bounds and no zero fill, so only chunks
//   wholly inside both matrices take it; the others take path 0.
// Defines (beyond sgmat_core's): SG_FETCH, B_DIRECT, CA, CB (fragments per subgroup per chunk,
// 1, 2 or 4, when copied), ABL.

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

#if SG_FETCH == 2
const KF: u32 = BK / SK;  // fragments along K per chunk
// Fragment j = sg + i * NSG of A's chunk: rows (j / KF) * SM, K columns (j % KF) * SK, the
// region load_a reads back as a left matrix.
fn cpa_ld(sg: u32, i: u32, base: u32, m0: u32, k0: u32) -> LM {
  let j = sg + i * NSG;
  return subgroupMatrixLoad<LM>(&a_h, base + (m0 + (j / KF) * SM) * p.a_ms + k0 + (j % KF) * SK, false, p.a_ms);
}
fn cpa_st(sg: u32, i: u32, buf: u32, f: LM) {
  let j = sg + i * NSG;
  subgroupMatrixStore(&As, buf * A_BUF + (j / KF) * SM * AST + (j % KF) * SK, f, false, AST);
}
#if !B_DIRECT && B_KFAST
// Fragment j of B's chunk: n rows (j / KF) * SN, K columns (j % KF) * SK, column-major as load_b.
fn cpb_ld(sg: u32, i: u32, base: u32, n0: u32, k0: u32) -> RM {
  let j = sg + i * NSG;
  return subgroupMatrixLoad<RM>(&b_h, base + (n0 + (j / KF) * SN) * p.b_ns + k0 + (j % KF) * SK, true, p.b_ns);
}
fn cpb_st(sg: u32, i: u32, buf: u32, f: RM) {
  let j = sg + i * NSG;
  subgroupMatrixStore(&Bs, buf * B_BUF + (j / KF) * SN * BST + (j % KF) * SK, f, true, BST);
}
#elif !B_DIRECT
const NF: u32 = BN / SN;  // fragments along N
// Fragment j of B's chunk: K rows (j / NF) * SK, columns (j % NF) * SN.
fn cpb_ld(sg: u32, i: u32, base: u32, n0: u32, k0: u32) -> RM {
  let j = sg + i * NSG;
  return subgroupMatrixLoad<RM>(&b_h, base + (k0 + (j / NF) * SK) * p.b_ks + n0 + (j % NF) * SN, false, p.b_ks);
}
fn cpb_st(sg: u32, i: u32, buf: u32, f: RM) {
  let j = sg + i * NSG;
  subgroupMatrixStore(&Bs, buf * B_BUF + (j / NF) * SK * BST + (j % NF) * SN, f, false, BST);
}
#endif
#endif

#if ABL == 1
// The ablation without staging stores keeps the fetches alive: the fetched words are folded
// into one u32 that decides a store after the loop, so the compiler cannot drop the loads.
// (Fragment copies cannot be folded: without stores their loads die too.)
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
