// Flash-attention prefill on subgroup matrices (tensor cores through Dawn's
// chromium_experimental_subgroup_matrix): f16 Q/K/V/output, f32 scores and accumulation, no mask
// or causal. Plan and conditions: plans/attention_plan.cpp; launcher: kernels/nn.cpp.
//
// One workgroup = one KV head g, HPW of its query heads and BQ query rows of each: NSG
// subgroups, subgroup s owning the SM rows r0 .. r0 + SM of head h0 + s / RS. Every K/V tile of
// BKV keys is staged once in workgroup memory and serves all HPW heads (GQA: fewer K/V reads).
// Per tile and subgroup:
//   S = Q K^T  Q as NQF left fragments held in registers for the whole kernel, K^T as right
//              fragments read column-major from the staged [key][d] tile;
//   softmax    S is stored to the subgroup's f32 scratch, where the LPR lanes of each row take
//              every LPR-th column (subgroup matrices give no element access): masks, row max
//              by shuffles, P = exp2(S - m) rounded to f16 into the subgroup's P scratch;
//   O += P V   P reloaded as left fragments, V as row-major right fragments; O is NOF result
//              fragments, named variables (an array of subgroup matrices indexed in a loop is
//              kept in local memory by NVIDIA's driver, see matmul_sgmat.wgsl).
// Rescaling O rows needs a round trip through the scratch, so it is lazy: each row keeps a
// reference max m and only moves it when a tile's max exceeds m + TAU, so P <= 2^TAU stays well
// inside f16 and the sum l (f32) cannot overflow; with real scores this happens in the first
// tiles only. Scores are kept in log2 units (scale * log2 e) so exp2 is the only transcendental.
//
// There is no subgroup barrier in WGSL, so every hand-over between a fragment store and the
// lanes (and back) is a workgroup barrier, and the work with barriers inside (the rescale, the
// guarded P V below, the epilogue) runs for every subgroup at once, chosen by workgroup-wide flags
// read with workgroupUniformLoad. NaN / inf follow docs/semantics.md ("Attention"): scores go
// through attn_score (a NaN or +inf score makes the row NaN), excluded keys get weight exactly 0,
// and since 0 * NaN = NaN in a matrix product, a tile whose V holds a non-finite value is
// multiplied by scalar code that skips weight-0 keys (as the reference does).
//
// Conditions the plan guarantees: D a multiple of 4 SK and 4 SN with NQF, NOF <= 16; a fixed
// subgroup size SGS that is a multiple of SM (LPR = SGS / SM a power of two dividing SN and
// BKV); the heads per workgroup HPW divide the GQA group and NSG; the Q staging fits the K tile.
// Operands are compact (offset 0). Defines: D SM SN SK SGS HPW NSG BKV NQF NOF LPR DEBUG_S.
// LPR (lanes per scratch row) is SGS / SM (every lane works on the scratch) or 1 (one lane per
// row, the lanes from SM on idle there: no shuffles).
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Subgroups whose rows see none of a tile's keys skip its products: control flow that is
// uniform per subgroup but not per workgroup, which is all subgroup matrices need.
diagnostic(off, subgroup_uniformity);
diagnostic(off, subgroup_matrix_uniformity);
#include "attention_common"

const D: u32 = {{D}}u;
const SM: u32 = {{SM}}u;
const SN: u32 = {{SN}}u;
const SK: u32 = {{SK}}u;
const SGS: u32 = {{SGS}}u;
const HPW: u32 = {{HPW}}u;
const NSG: u32 = {{NSG}}u;
const BKV: u32 = {{BKV}}u;
const NQF: u32 = {{NQF}}u;  // D / SK
const NOF: u32 = {{NOF}}u;  // D / SN

const RS: u32 = NSG / HPW;    // subgroups per head
const BQ: u32 = RS * SM;      // query rows per workgroup
const NT: u32 = NSG * SGS;
const LPR: u32 = {{LPR}}u;    // lanes per scratch row (SGS / SM or 1)
const CPL: u32 = BKV / LPR;   // scores per lane per tile
const D4: u32 = D / 4u;
const LKV: u32 = (BKV * D4 + NT - 1u) / NT;  // vec4 loads per invocation per K (or V) tile
// Staged rows are padded by 16 bytes: fragment rows stay 16-byte aligned and consecutive rows
// start on different banks.
const KST: u32 = D + 8u;      // K / V tile [key][d]
const SST: u32 = BKV + 4u;    // f32 scratch [row][key]
const PST: u32 = BKV + 8u;    // P scratch [row][key]
const QST: u32 = SK + 8u;     // Q staging [row][d], one fragment column at a time
const VOFF: u32 = BKV * KST;  // the V tile in KV
const TAU: f32 = 8.0;
const LOG2E: f32 = 1.4426950408889634;
const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read> q: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> k: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read> v: array<vec4<f16>>;
@group(0) @binding(3) var<storage, read_write> o: array<f16>;
@group(0) @binding(4) var<uniform> p: AttnParams;

// The K tile, then the V tile (one array: the Q staging uses both).
var<workgroup> KV: array<f16, 2u * BKV * KST>;
var<workgroup> Ss: array<f32, NSG * SM * SST>;
var<workgroup> Ps: array<f16, NSG * SM * PST>;
// Per tile parity: bit 0 = the staged V holds a non-finite value, bit 1 = some row's reference
// max moved while it already had weight (its O must be rescaled). Two slots, so one can be
// cleared while the other is being set; four words, because the driver places the workgroup
// variables one after another in an order of its own, and subgroup-matrix loads and stores need
// 16-byte aligned addresses: with an 8-byte flags array first, NVIDIA's driver (run 18) read
// and wrote every fragment 8 bytes off (the loads round the address down). Every workgroup
// variable here is a multiple of 16 bytes.
var<workgroup> flags: array<atomic<u32>, 4>;

alias LM = subgroup_matrix_left<f16, SK, SM>;
alias RM = subgroup_matrix_right<f16, SN, SK>;
alias AM = subgroup_matrix_result<f32, SN, SM>;

// Query head, row, or NONE for row rr of the staged block (subgroup rr / SM, row rr % SM).
fn q_row(rr: u32, q0: u32) -> u32 {
  let qi = q0 + ((rr / SM) % RS) * SM + rr % SM;
  return select(NONE, qi, qi < p.lq);
}

// Left fragment c of this subgroup's Q rows (d in [c SK, c SK + SK)), staged through the K/V tiles:
// all subgroups' rows at once (called in workgroup-uniform control flow).
fn q_frag(lid: u32, sg: u32, q0: u32, h0: u32, c: u32) -> LM {
  workgroupBarrier();
  for (var e = lid; e < NSG * SM * SK / 4u; e += NT) {
    let rr = e / (SK / 4u);
    let cc = (e % (SK / 4u)) * 4u;
    let qi = q_row(rr, q0);
    var x = vec4<f16>();
    if (qi != NONE) { x = q[((qi * p.heads + h0 + rr / (SM * RS)) * D + c * SK + cc) / 4u]; }
    let at = rr * QST + cc;
    KV[at] = x.x; KV[at + 1u] = x.y; KV[at + 2u] = x.z; KV[at + 3u] = x.w;
  }
  workgroupBarrier();
  return subgroupMatrixLoad<LM>(&KV, sg * SM * QST, false, QST);
}

// Vec4 index in k / v of element e (vec4 units) of the tile at key kt, or NONE past the keys.
fn kv_src(e: u32, kt: u32, g: u32) -> u32 {
  let j = kt + e / D4;
  if (e >= BKV * D4 || j >= p.lk) { return NONE; }
  return (j * p.kv_heads + g) * D4 + e % D4;
}
fn kv_dst(e: u32) -> u32 { return (e / D4) * KST + (e % D4) * 4u; }

fn nonfinite(x: vec4<f16>) -> bool {
  let w = bitcast<vec2<u32>>(x);
  let lo = (w & vec2(0x7c00u)) == vec2(0x7c00u);
  let hi = (w & vec2(0x7c000000u)) == vec2(0x7c000000u);
  return any(lo) || any(hi);
}

fn ldk(kb: u32, c: u32) -> RM { return subgroupMatrixLoad<RM>(&KV, kb + c * SK, true, KST); }
fn ldv(vb: u32, f: u32) -> RM { return subgroupMatrixLoad<RM>(&KV, VOFF + vb + f * SN, false, KST); }

// The row work on an O fragment goes through this subgroup's f32 scratch: the caller stores the
// fragment (subgroupMatrixStore at sbase), calls one of these, and reloads it (ldo). No
// subgroup matrix crosses a barrier inside a function: the GEMM, which passes on the H200,
// never passes one across a barrier, and this kernel's outputs were wrong there (run 17).
fn ldo(sbase: u32) -> AM { return subgroupMatrixLoad<AM>(&Ss, sbase, false, SST); }

// Multiplies row rl of the stored fragment by fac (the lane's row factor).
fn scale_rows(fac: f32, sbase: u32, rl: u32, part: u32) {
  workgroupBarrier();
  if (rl < SM) {
    for (var t = 0u; t < SN / LPR; t++) { Ss[sbase + rl * SST + part + t * LPR] *= fac; }
  }
  workgroupBarrier();
}

// Stored O fragment f += P V(:, f SN ..) in scalar code that never reads V of a weight-0 key.
fn pv_rows(f: u32, sbase: u32, pbase: u32, rl: u32, part: u32) {
  workgroupBarrier();
  for (var t = 0u; t < SN / LPR && rl < SM; t++) {
    let n = part + t * LPR;
    var acc = Ss[sbase + rl * SST + n];
    for (var j = 0u; j < BKV; j++) {
      let w = f32(Ps[pbase + rl * PST + j]);
      if (w != 0.0) { acc += w * f32(KV[VOFF + j * KST + f * SN + n]); }
    }
    Ss[sbase + rl * SST + n] = acc;
  }
  workgroupBarrier();
}

// Writes stored fragment f of the output rows: row sum and poisoned state are the lane's row's.
fn emit_rows(f: u32, sbase: u32, rl: u32, part: u32, row: u32, h: u32, inv: f32, bad: bool) {
  workgroupBarrier();
  if (rl < SM && row < p.lq) {
    for (var t = 0u; t < SN / LPR; t++) {
      let n = part + t * LPR;
      let val = select(Ss[sbase + rl * SST + n] * inv, attn_nan(), bad);
      o[(row * p.heads + h) * D + f * SN + n] = f16(val);
    }
  }
  workgroupBarrier();
}

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, @builtin(subgroup_id) sg: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
  // Query blocks in reverse: with a causal mask the last blocks see the most keys, and starting
  // them first keeps the tail of the dispatch short.
  let q0 = (nwg.x - 1u - wid.x) * BQ;
  let hblocks = p.group / HPW;
  let g = wid.y / hblocks;
  let h0 = g * p.group + (wid.y % hblocks) * HPW;
  let h = h0 + sg / RS;
  let r0 = q0 + (sg % RS) * SM;
  let rl = lane / LPR;       // the lane's scratch row (none from SM on, where LPR = 1)
  let part = lane % LPR;     // and its first column
  let act = rl < SM;
  let row = r0 + rl;
  let sbase = sg * SM * SST;
  let pbase = sg * SM * PST;
  let diag = i32(p.lk) - i32(p.lq);  // key j is visible to query i when j <= i + diag (causal)
  let causal = p.causal != 0u;
  let sl = p.scale * LOG2E;
  // Workgroup memory is not zeroed (Dawn runs with disable_workgroup_init); the first barrier
  // is in q_frag.
  if (lid == 0u) {
    atomicStore(&flags[0], 0u);
    atomicStore(&flags[1], 0u);
  }

  let qf0 = q_frag(lid, sg, q0, h0, 0u); let qf1 = q_frag(lid, sg, q0, h0, 1u);
  let qf2 = q_frag(lid, sg, q0, h0, 2u); let qf3 = q_frag(lid, sg, q0, h0, 3u);
#if NQF > 4
  let qf4 = q_frag(lid, sg, q0, h0, 4u); let qf5 = q_frag(lid, sg, q0, h0, 5u);
  let qf6 = q_frag(lid, sg, q0, h0, 6u); let qf7 = q_frag(lid, sg, q0, h0, 7u);
#endif
#if NQF > 8
  let qf8 = q_frag(lid, sg, q0, h0, 8u); let qf9 = q_frag(lid, sg, q0, h0, 9u);
  let qf10 = q_frag(lid, sg, q0, h0, 10u); let qf11 = q_frag(lid, sg, q0, h0, 11u);
#endif
#if NQF > 12
  let qf12 = q_frag(lid, sg, q0, h0, 12u); let qf13 = q_frag(lid, sg, q0, h0, 13u);
  let qf14 = q_frag(lid, sg, q0, h0, 14u); let qf15 = q_frag(lid, sg, q0, h0, 15u);
#endif

  var o0: AM; var o1: AM; var o2: AM; var o3: AM;
#if NOF > 4
  var o4: AM; var o5: AM; var o6: AM; var o7: AM;
#endif
#if NOF > 8
  var o8: AM; var o9: AM; var o10: AM; var o11: AM;
#endif
#if NOF > 12
  var o12: AM; var o13: AM; var o14: AM; var o15: AM;
#endif

  // Keys past the last one the block's last row sees are never loaded.
  var kv_end = p.lk;
  if (causal) { kv_end = u32(clamp(i32(min(q0 + BQ, p.lq)) + diag, 0, i32(p.lk))); }
  // This subgroup's last row sees keys below sg_end; tiles from there on it skips.
  var sg_end = p.lk;
  if (causal) { sg_end = u32(clamp(i32(min(r0 + SM, p.lq)) + diag, 0, i32(p.lk))); }
  var m = NEG_BIG;  // the row's reference max (log2 units)
  var l = 0.0;      // the lane's part of the row's weight sum

  // Tile 0 staged after the Q rounds (which used KV); later tiles are fetched into registers
  // during the previous tile's math.
  var rk: array<vec4<f16>, LKV>;
  var rv: array<vec4<f16>, LKV>;
  workgroupBarrier();
  for (var i = 0u; i < LKV; i++) {
    let e = lid + i * NT;
    let s = kv_src(e, 0u, g);
    var xk = vec4<f16>();
    var xv = vec4<f16>();
    if (s != NONE) { xk = k[s]; xv = v[s]; }
    if (e < BKV * D4) {
      let at = kv_dst(e);
      KV[at] = xk.x; KV[at + 1u] = xk.y; KV[at + 2u] = xk.z; KV[at + 3u] = xk.w;
      let av = VOFF + at;
      KV[av] = xv.x; KV[av + 1u] = xv.y; KV[av + 2u] = xv.z; KV[av + 3u] = xv.w;
      if (nonfinite(xv)) { atomicOr(&flags[0], 1u); }
    }
  }

  var t = 0u;
  for (var kt = 0u; kt < kv_end; kt += BKV) {
    workgroupBarrier();  // this tile's K / V are staged
    if (lid == 0u) { atomicStore(&flags[(t + 1u) & 1u], 0u); }  // read last at the previous tile
    let more = kt + BKV < kv_end;
    if (more) {  // issued before the math so the global latency overlaps it
      for (var i = 0u; i < LKV; i++) {
        let s = kv_src(lid + i * NT, kt + BKV, g);
        rk[i] = vec4<f16>();
        rv[i] = vec4<f16>();
        if (s != NONE) { rk[i] = k[s]; rv[i] = v[s]; }
      }
    }
    let live = kt < sg_end;  // uniform per subgroup

    // S = Q K^T into the scratch.
    if (live) {
      for (var j = 0u; j < BKV / SN; j++) {
        let kb = j * SN * KST;
        // The first product starts the fragment (subgroupMatrixMultiply): no zero matrix is
        // built. A `var s: AM;` here was not re-zeroed per trip with Debian's Dawn on lavapipe
        // (each fragment came out as the sum of the previous ones), and the zero-valued AM() that
        // replaced it is the one construct of this kernel the GEMM (which passes on the H200)
        // does not use, while this kernel's outputs were wrong there from the first row on.
        var s = subgroupMatrixMultiply<f32>(qf0, ldk(kb, 0u));
#if DEBUG_S != 4
        s = subgroupMatrixMultiplyAccumulate(qf1, ldk(kb, 1u), s);
        s = subgroupMatrixMultiplyAccumulate(qf2, ldk(kb, 2u), s);
        s = subgroupMatrixMultiplyAccumulate(qf3, ldk(kb, 3u), s);
#if NQF > 4
        s = subgroupMatrixMultiplyAccumulate(qf4, ldk(kb, 4u), s);
        s = subgroupMatrixMultiplyAccumulate(qf5, ldk(kb, 5u), s);
        s = subgroupMatrixMultiplyAccumulate(qf6, ldk(kb, 6u), s);
        s = subgroupMatrixMultiplyAccumulate(qf7, ldk(kb, 7u), s);
#endif
#if NQF > 8
        s = subgroupMatrixMultiplyAccumulate(qf8, ldk(kb, 8u), s);
        s = subgroupMatrixMultiplyAccumulate(qf9, ldk(kb, 9u), s);
        s = subgroupMatrixMultiplyAccumulate(qf10, ldk(kb, 10u), s);
        s = subgroupMatrixMultiplyAccumulate(qf11, ldk(kb, 11u), s);
#endif
#if NQF > 12
        s = subgroupMatrixMultiplyAccumulate(qf12, ldk(kb, 12u), s);
        s = subgroupMatrixMultiplyAccumulate(qf13, ldk(kb, 13u), s);
        s = subgroupMatrixMultiplyAccumulate(qf14, ldk(kb, 14u), s);
        s = subgroupMatrixMultiplyAccumulate(qf15, ldk(kb, 15u), s);
#endif
#endif
        subgroupMatrixStore(&Ss, sbase + j * SN, s, false, SST);
      }
    }
    workgroupBarrier();  // S is visible to the lanes; K is no longer read
#if DEBUG_S
    // Diagnosis (AttentionTuning::prefill_sg_debug, modes there): an intermediate of the first
    // tile, then stop; every invocation returns here, so no barrier is left waiting.
#if DEBUG_S == 2 || DEBUG_S == 3
    if (live) {
#if DEBUG_S == 2
      subgroupMatrixStore(&Ps, pbase, qf0, false, PST);
#else
      subgroupMatrixStore(&Ps, pbase, ldk(0u, 0u), true, PST);
#endif
    }
    workgroupBarrier();
    if (act && row < p.lq) {
      for (var c = 0u; c < CPL; c++) {
        let j = part + c * LPR;
        if (j < SK) { o[(row * p.heads + h) * D + j] = Ps[pbase + rl * PST + j]; }
      }
    }
#else
    if (act && row < p.lq) {
      for (var c = 0u; c < CPL; c++) {
        let j = part + c * LPR;
        if (j < D) { o[(row * p.heads + h) * D + j] = f16(Ss[sbase + rl * SST + j]); }
      }
    }
#endif
    return;
#endif
    if (more) {
      for (var i = 0u; i < LKV; i++) {
        let e = lid + i * NT;
        if (e < BKV * D4) {
          let at = kv_dst(e);
          KV[at] = rk[i].x; KV[at + 1u] = rk[i].y; KV[at + 2u] = rk[i].z; KV[at + 3u] = rk[i].w;
        }
      }
    }

    // Softmax of the lane's row over its columns part, part + LPR, ...
    var fac = 1.0;
    if (live && act) {
      // Masks only where some row of the workgroup misses a key of the tile: the diagonal tiles
      // and the last, partial one (whose missing keys were staged as zeros).
      let masked = kt + BKV > p.lk || (causal && i32(kt + BKV - 1u) > i32(q0) + diag);
      var sv: array<f32, CPL>;
      var tmax = NEG_BIG;
      for (var c = 0u; c < CPL; c++) {
        let j = part + c * LPR;
        var sc = attn_score(Ss[sbase + rl * SST + j] * sl);
        if (masked && !(kt + j < p.lk && (!causal || i32(kt + j) <= i32(row) + diag))) { sc = NEG_BIG; }
        sv[c] = sc;
        tmax = max(tmax, sc);
      }
      for (var x = 1u; x < LPR; x <<= 1u) { tmax = max(tmax, subgroupShuffleXor(tmax, x)); }
      if (tmax > NEG_LIMIT && tmax > m + TAU) {
        if (m > NEG_LIMIT) {  // the row may already have weight: its O must follow
          fac = exp2(m - tmax);
          atomicOr(&flags[t & 1u], 2u);
        }
        m = tmax;
        l *= fac;
      }
      for (var c = 0u; c < CPL; c++) {
        var w = 0.0h;
        if (sv[c] > NEG_LIMIT) { w = f16(exp2(sv[c] - m)); }
        l += f32(w);
        Ps[pbase + rl * PST + part + c * LPR] = w;
      }
    }
    let fl = workgroupUniformLoad(&flags[t & 1u]);  // also: P is visible to the subgroup

    if ((fl & 2u) != 0u) {
      subgroupMatrixStore(&Ss, sbase, o0, false, SST); scale_rows(fac, sbase, rl, part); o0 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o1, false, SST); scale_rows(fac, sbase, rl, part); o1 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o2, false, SST); scale_rows(fac, sbase, rl, part); o2 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o3, false, SST); scale_rows(fac, sbase, rl, part); o3 = ldo(sbase);
#if NOF > 4
      subgroupMatrixStore(&Ss, sbase, o4, false, SST); scale_rows(fac, sbase, rl, part); o4 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o5, false, SST); scale_rows(fac, sbase, rl, part); o5 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o6, false, SST); scale_rows(fac, sbase, rl, part); o6 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o7, false, SST); scale_rows(fac, sbase, rl, part); o7 = ldo(sbase);
#endif
#if NOF > 8
      subgroupMatrixStore(&Ss, sbase, o8, false, SST); scale_rows(fac, sbase, rl, part); o8 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o9, false, SST); scale_rows(fac, sbase, rl, part); o9 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o10, false, SST); scale_rows(fac, sbase, rl, part); o10 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o11, false, SST); scale_rows(fac, sbase, rl, part); o11 = ldo(sbase);
#endif
#if NOF > 12
      subgroupMatrixStore(&Ss, sbase, o12, false, SST); scale_rows(fac, sbase, rl, part); o12 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o13, false, SST); scale_rows(fac, sbase, rl, part); o13 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o14, false, SST); scale_rows(fac, sbase, rl, part); o14 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o15, false, SST); scale_rows(fac, sbase, rl, part); o15 = ldo(sbase);
#endif
    }

    // O += P V.
    if ((fl & 1u) != 0u) {
      // Inactive subgroups' P was not written this tile: their rows must add nothing.
      if (!live && act) {
        for (var c = 0u; c < CPL; c++) { Ps[pbase + rl * PST + part + c * LPR] = 0.0h; }
      }
      subgroupMatrixStore(&Ss, sbase, o0, false, SST); pv_rows(0u, sbase, pbase, rl, part); o0 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o1, false, SST); pv_rows(1u, sbase, pbase, rl, part); o1 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o2, false, SST); pv_rows(2u, sbase, pbase, rl, part); o2 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o3, false, SST); pv_rows(3u, sbase, pbase, rl, part); o3 = ldo(sbase);
#if NOF > 4
      subgroupMatrixStore(&Ss, sbase, o4, false, SST); pv_rows(4u, sbase, pbase, rl, part); o4 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o5, false, SST); pv_rows(5u, sbase, pbase, rl, part); o5 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o6, false, SST); pv_rows(6u, sbase, pbase, rl, part); o6 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o7, false, SST); pv_rows(7u, sbase, pbase, rl, part); o7 = ldo(sbase);
#endif
#if NOF > 8
      subgroupMatrixStore(&Ss, sbase, o8, false, SST); pv_rows(8u, sbase, pbase, rl, part); o8 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o9, false, SST); pv_rows(9u, sbase, pbase, rl, part); o9 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o10, false, SST); pv_rows(10u, sbase, pbase, rl, part); o10 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o11, false, SST); pv_rows(11u, sbase, pbase, rl, part); o11 = ldo(sbase);
#endif
#if NOF > 12
      subgroupMatrixStore(&Ss, sbase, o12, false, SST); pv_rows(12u, sbase, pbase, rl, part); o12 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o13, false, SST); pv_rows(13u, sbase, pbase, rl, part); o13 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o14, false, SST); pv_rows(14u, sbase, pbase, rl, part); o14 = ldo(sbase);
      subgroupMatrixStore(&Ss, sbase, o15, false, SST); pv_rows(15u, sbase, pbase, rl, part); o15 = ldo(sbase);
#endif
    } else if (live) {
      for (var c = 0u; c < BKV / SK; c++) {
        let pf = subgroupMatrixLoad<LM>(&Ps, pbase + c * SK, false, PST);
        let vb = c * SK * KST;
        o0 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 0u), o0);
        o1 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 1u), o1);
        o2 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 2u), o2);
        o3 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 3u), o3);
#if NOF > 4
        o4 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 4u), o4);
        o5 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 5u), o5);
        o6 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 6u), o6);
        o7 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 7u), o7);
#endif
#if NOF > 8
        o8 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 8u), o8);
        o9 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 9u), o9);
        o10 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 10u), o10);
        o11 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 11u), o11);
#endif
#if NOF > 12
        o12 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 12u), o12);
        o13 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 13u), o13);
        o14 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 14u), o14);
        o15 = subgroupMatrixMultiplyAccumulate(pf, ldv(vb, 15u), o15);
#endif
      }
    }
    workgroupBarrier();  // P and V are no longer read
    if (more) {
      for (var i = 0u; i < LKV; i++) {
        let e = lid + i * NT;
        if (e < BKV * D4) {
          let at = VOFF + kv_dst(e);
          KV[at] = rv[i].x; KV[at + 1u] = rv[i].y; KV[at + 2u] = rv[i].z; KV[at + 3u] = rv[i].w;
          if (nonfinite(rv[i])) { atomicOr(&flags[(t + 1u) & 1u], 1u); }
        }
      }
    }
    t++;
  }

  for (var x = 1u; x < LPR; x <<= 1u) { l += subgroupShuffleXor(l, x); }
  // A row that saw no key stays 0, as in the reference; a NaN / +inf score gives a NaN row.
  let inv = select(0.0, 1.0 / l, l > 0.0);
  let bad = attn_poisoned(m);
  subgroupMatrixStore(&Ss, sbase, o0, false, SST); emit_rows(0u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o1, false, SST); emit_rows(1u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o2, false, SST); emit_rows(2u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o3, false, SST); emit_rows(3u, sbase, rl, part, row, h, inv, bad);
#if NOF > 4
  subgroupMatrixStore(&Ss, sbase, o4, false, SST); emit_rows(4u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o5, false, SST); emit_rows(5u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o6, false, SST); emit_rows(6u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o7, false, SST); emit_rows(7u, sbase, rl, part, row, h, inv, bad);
#endif
#if NOF > 8
  subgroupMatrixStore(&Ss, sbase, o8, false, SST); emit_rows(8u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o9, false, SST); emit_rows(9u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o10, false, SST); emit_rows(10u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o11, false, SST); emit_rows(11u, sbase, rl, part, row, h, inv, bad);
#endif
#if NOF > 12
  subgroupMatrixStore(&Ss, sbase, o12, false, SST); emit_rows(12u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o13, false, SST); emit_rows(13u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o14, false, SST); emit_rows(14u, sbase, rl, part, row, h, inv, bad);
  subgroupMatrixStore(&Ss, sbase, o15, false, SST); emit_rows(15u, sbase, rl, part, row, h, inv, bad);
#endif
}
