// The workgroup-tiled product on subgroup matrices shared by matmul_sgmat.wgsl (f16 operands)
// and q_matmul_sgmat.wgsl (packed GGUF weights decoded to f16 while staged). Included, not a
// kernel: the design is described in matmul_sgmat.wgsl.
//
// The includer declares `p` (fields M, N, K, a_ms, batch_base), the A operand `a` as
// array<vec4<f16>> (array<vec4<u32>> with SG_FETCH 1; K-contiguous, rows a_ms apart), and:
//   alias RB, fetch_b(lid, base, n0, k0) -> RB   one chunk of B, in registers (zeros out of range)
//   stage_b(lid, buf, &r)                         those registers into Bs
//   batch_bases(z) -> vec3<u32>                            A, B and output bases of batch z
//                                                          (matmul_batch.wgsl for the f16 kernel)
//   store4(o_base, m, n, v), store1(o_base, m, n, v)       the epilogue's stores
// Module-scope declarations may come in any order in WGSL, so the includer's functions can
// use the constants below. The chunk data paths (SG_FETCH, ABL) are sgmat_fetch.wgsl.
const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const FM: u32 = {{FM}}u;
const FN: u32 = {{FN}}u;
const SM: u32 = {{SM}}u;
const SN: u32 = {{SN}}u;
const SK: u32 = {{SK}}u;
const SGS: u32 = {{SGS}}u;
const GROUP_M: u32 = 8u;
const ABL: u32 = {{ABL}}u;

const SGN: u32 = BN / (FN * SN);   // subgroups along N
const SGM: u32 = BM / (FM * SM);   // subgroups along M
const NSG: u32 = SGM * SGN;
const NT: u32 = NSG * SGS;

const AST: u32 = BK + 8u;          // A staged [BM][AST]: m rows, k contiguous
const A_BUF: u32 = BM * AST;
#if B_KFAST
const BST: u32 = BK + 8u;          // B staged [BN][BST]: n rows, k contiguous
const B_BUF: u32 = BN * BST;
#else
const BST: u32 = BN + 8u;          // B staged [BK][BST]: k rows, n contiguous
const B_BUF: u32 = BK * BST;
#endif
const LA4: u32 = BM * BK / 4u / NT;  // vec4 fetches per invocation per chunk
const LB4: u32 = BN * BK / 4u / NT;
const FRAG: u32 = SM * SN;
const EPI: u32 = NSG * FRAG / NT;    // results each invocation writes per fragment round

var<workgroup> As: array<f16, 2u * A_BUF>;
var<workgroup> Bs: array<f16, 2u * B_BUF>;
var<workgroup> Cs: array<f32, NSG * FRAG>;

alias LM = subgroup_matrix_left<f16, SK, SM>;
alias RM = subgroup_matrix_right<f16, SN, SK>;
alias AM = subgroup_matrix_result<f32, SN, SM>;

fn load_a(at: u32) -> LM { return subgroupMatrixLoad<LM>(&As, at, false, AST); }
#if B_KFAST
fn load_b(buf: u32, n: u32, k: u32) -> RM { return subgroupMatrixLoad<RM>(&Bs, buf + n * BST + k, true, BST); }
#else
fn load_b(buf: u32, n: u32, k: u32) -> RM { return subgroupMatrixLoad<RM>(&Bs, buf + k * BST + n, false, BST); }
#endif
// c += a b for result fragment (i, j). ABL 4 keeps only the products that use each loaded
// fragment once (pairs i % FN == j, or j % FM == i when FN > FM): dropping more would let the
// compiler drop loads too.
fn mma(i: u32, j: u32, a: LM, b: RM, c: AM) -> AM {
#if ABL == 4
  if ((FM >= FN && i % FN != j) || (FM < FN && j % FM != i)) { return c; }
#endif
  return subgroupMatrixMultiplyAccumulate(a, b, c);
}

#include "sgmat_fetch"

// Writes fragment (i, j) of every subgroup, which each stored into its slot of Cs: all
// invocations convert and store the NSG slots (called in uniform control flow).
fn emit(lid: u32, m0: u32, n0: u32, o_base: u32, i: u32, j: u32) {
  workgroupBarrier();
#if O_MODE == 1
  for (var q = 0u; q < EPI / 4u; q++) {
    let e = (lid + q * NT) * 4u;  // 4 consecutive columns of one row of one slot
    let s = e / FRAG;
    let m = m0 + (s / SGN) * FM * SM + i * SM + (e % FRAG) / SN;
    let n = n0 + (s % SGN) * FN * SN + j * SN + e % SN;
    if (m < p.M && n < p.N) { store4(o_base, m, n, vec4<f32>(Cs[e], Cs[e + 1u], Cs[e + 2u], Cs[e + 3u])); }
  }
#else
  for (var q = 0u; q < EPI; q++) {
    let e = lid + q * NT;
    let s = e / FRAG;
    let m = m0 + (s / SGN) * FM * SM + i * SM + (e % FRAG) / SN;
    let n = n0 + (s % SGN) * FN * SN + j * SN + e % SN;
    if (m < p.M && n < p.N) { store1(o_base, m, n, Cs[e]); }
  }
#endif
  workgroupBarrier();
}

@compute @workgroup_size(NT)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>, @builtin(subgroup_id) sg: u32) {
  let bases = batch_bases(wid.z + p.batch_base);
  let a_base = bases.x;
  let b_base = bases.y;
  let o_base = bases.z;
  // Tiles in groups of GROUP_M tile rows, column-major within a group: the workgroups in flight
  // then share a few rows of A and a few columns of B, which stay in L2 even when B does not.
  let tiles = wid.y * nwg.x + wid.x;
  let first = (tiles / (GROUP_M * nwg.x)) * GROUP_M;
  let rows = min(nwg.y - first, GROUP_M);
  let in_group = tiles % (GROUP_M * nwg.x);
  let m0 = (first + in_group % rows) * BM;
  let n0 = (in_group / rows) * BN;
  // This subgroup's fragments: rows sm0 + i*SM, columns sn0 + j*SN of the workgroup tile.
  let sm0 = (sg / SGN) * FM * SM;
  let sn0 = (sg % SGN) * FN * SN;

  var c00: AM; var c01: AM; var c10: AM; var c11: AM;
#if FN == 4
  var c02: AM; var c03: AM; var c12: AM; var c13: AM;
#endif
#if FM == 4
  var c20: AM; var c21: AM; var c30: AM; var c31: AM;
#endif
#if FM == 4 && FN == 4
  var c22: AM; var c23: AM; var c32: AM; var c33: AM;
#endif

  // Chunk 0 is staged before the loop; trip t multiplies chunk t from buffer t & 1 while chunk
  // t + 1's global loads are in flight, then stages chunk t + 1 into the other buffer, last read
  // in trip t - 1 (before its closing barrier): one barrier per chunk. The multiplies stay
  // outside any branch: behind one (a single loop that also held the prologue) they ran much
  // slower on NVIDIA (docs/benchmark-history.md, run 17). Chunks past K and tiles past M or N
  // are fetched as zeros.
  let chunks = (p.K + BK - 1u) / BK;
  var ra = fetch_a(lid, a_base, m0, 0u);
  var rb = fetch_b(lid, b_base, n0, 0u);
  stage_a(lid, 0u, &ra);
  stage_b(lid, 0u, &rb);
  workgroupBarrier();
#if ABL == 3 || ABL == 5
  // Fixed fragments, loaded once from chunk 0: the loop multiplies without fragment loads.
  let ha0 = load_a(sm0 * AST); let ha1 = load_a((sm0 + SM) * AST);
#if FM == 4
  let ha2 = load_a((sm0 + 2u * SM) * AST); let ha3 = load_a((sm0 + 3u * SM) * AST);
#endif
  let hb0 = load_b(0u, sn0, 0u); let hb1 = load_b(0u, sn0 + SN, 0u);
#if FN == 4
  let hb2 = load_b(0u, sn0 + 2u * SN, 0u); let hb3 = load_b(0u, sn0 + 3u * SN, 0u);
#endif
#endif
#if ABL == 1
  var sink = 0u;
#endif
  for (var t = 0u; t < chunks; t++) {
    let cur = t & 1u;
    let more = t + 1u < chunks;
#if ABL == 2 || ABL == 5
    let fetch = false;  // ablation: only chunk 0 is ever fetched
#else
    let fetch = more;
#endif
#if ABL == 1 || ABL == 5
    let stage = false;  // ablation: only chunk 0 is ever staged
#else
    let stage = more;
#endif
    if (fetch) {
      ra = fetch_a(lid, a_base, m0, (t + 1u) * BK);
      rb = fetch_b(lid, b_base, n0, (t + 1u) * BK);
    }
    let ab = cur * A_BUF + sm0 * AST;
    let bb = cur * B_BUF;
    for (var kk = 0u; kk < BK; kk += SK) {
#if ABL == 3 || ABL == 5
      let a0 = ha0; let a1 = ha1;
#if FM == 4
      let a2 = ha2; let a3 = ha3;
#endif
      var b = hb0;
#else
      let a0 = load_a(ab + kk);
      let a1 = load_a(ab + SM * AST + kk);
#if FM == 4
      let a2 = load_a(ab + 2u * SM * AST + kk);
      let a3 = load_a(ab + 3u * SM * AST + kk);
#endif
      var b = load_b(bb, sn0, kk);
#endif
      c00 = mma(0u, 0u, a0, b, c00);
      c10 = mma(1u, 0u, a1, b, c10);
#if FM == 4
      c20 = mma(2u, 0u, a2, b, c20);
      c30 = mma(3u, 0u, a3, b, c30);
#endif
#if ABL == 3 || ABL == 5
      b = hb1;
#else
      b = load_b(bb, sn0 + SN, kk);
#endif
      c01 = mma(0u, 1u, a0, b, c01);
      c11 = mma(1u, 1u, a1, b, c11);
#if FM == 4
      c21 = mma(2u, 1u, a2, b, c21);
      c31 = mma(3u, 1u, a3, b, c31);
#endif
#if FN == 4
#if ABL == 3 || ABL == 5
      b = hb2;
#else
      b = load_b(bb, sn0 + 2u * SN, kk);
#endif
      c02 = mma(0u, 2u, a0, b, c02);
      c12 = mma(1u, 2u, a1, b, c12);
#if FM == 4
      c22 = mma(2u, 2u, a2, b, c22);
      c32 = mma(3u, 2u, a3, b, c32);
#endif
#if ABL == 3 || ABL == 5
      b = hb3;
#else
      b = load_b(bb, sn0 + 3u * SN, kk);
#endif
      c03 = mma(0u, 3u, a0, b, c03);
      c13 = mma(1u, 3u, a1, b, c13);
#if FM == 4
      c23 = mma(2u, 3u, a2, b, c23);
      c33 = mma(3u, 3u, a3, b, c33);
#endif
#endif
    }
    if (stage) {
      stage_a(lid, cur ^ 1u, &ra);
      stage_b(lid, cur ^ 1u, &rb);
    }
#if ABL == 1
    else if (fetch) { sink ^= fold_regs(&ra, &rb); }
#endif
    workgroupBarrier();
  }
#if ABL == 1
  if (sink == 0x9e3779b9u && m0 < p.M && n0 + 4u <= p.N) { store4(o_base, m0, n0, vec4<f32>(1.0)); }
#endif

  // Epilogue: each subgroup stores one fragment into its slot of Cs, then emit() writes them.
  let slot = sg * FRAG;
  subgroupMatrixStore(&Cs, slot, c00, false, SN); emit(lid, m0, n0, o_base, 0u, 0u);
  subgroupMatrixStore(&Cs, slot, c01, false, SN); emit(lid, m0, n0, o_base, 0u, 1u);
  subgroupMatrixStore(&Cs, slot, c10, false, SN); emit(lid, m0, n0, o_base, 1u, 0u);
  subgroupMatrixStore(&Cs, slot, c11, false, SN); emit(lid, m0, n0, o_base, 1u, 1u);
#if FN == 4
  subgroupMatrixStore(&Cs, slot, c02, false, SN); emit(lid, m0, n0, o_base, 0u, 2u);
  subgroupMatrixStore(&Cs, slot, c03, false, SN); emit(lid, m0, n0, o_base, 0u, 3u);
  subgroupMatrixStore(&Cs, slot, c12, false, SN); emit(lid, m0, n0, o_base, 1u, 2u);
  subgroupMatrixStore(&Cs, slot, c13, false, SN); emit(lid, m0, n0, o_base, 1u, 3u);
#endif
#if FM == 4
  subgroupMatrixStore(&Cs, slot, c20, false, SN); emit(lid, m0, n0, o_base, 2u, 0u);
  subgroupMatrixStore(&Cs, slot, c21, false, SN); emit(lid, m0, n0, o_base, 2u, 1u);
  subgroupMatrixStore(&Cs, slot, c30, false, SN); emit(lid, m0, n0, o_base, 3u, 0u);
  subgroupMatrixStore(&Cs, slot, c31, false, SN); emit(lid, m0, n0, o_base, 3u, 1u);
#endif
#if FM == 4 && FN == 4
  subgroupMatrixStore(&Cs, slot, c22, false, SN); emit(lid, m0, n0, o_base, 2u, 2u);
  subgroupMatrixStore(&Cs, slot, c23, false, SN); emit(lid, m0, n0, o_base, 2u, 3u);
  subgroupMatrixStore(&Cs, slot, c32, false, SN); emit(lid, m0, n0, o_base, 3u, 2u);
  subgroupMatrixStore(&Cs, slot, c33, false, SN); emit(lid, m0, n0, o_base, 3u, 3u);
#endif
}
