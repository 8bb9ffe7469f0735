// f16 matmul on subgroup matrices (tensor cores through Dawn's
// chromium_experimental_subgroup_matrix, Vulkan cooperative matrices underneath):
// o[z, m, n] = sum_k A[z, m, k] * B[z, k, n], f16 operands, f32 accumulation, f16 output.
// Launcher: kernels/matmul.cpp; plan and conditions: plans/matmul_plan.cpp. The tiled loop
// itself is sgmat_core.wgsl, shared with the quantized prefill (q_matmul_sgmat.wgsl).
//
// One workgroup computes a BM x BN tile with NSG subgroups laid out SGM x SGN; each subgroup
// owns FM x FN fragments of SM x SN results (FM, FN each 2 or 4). The fragments are named
// variables, not arrays: an array of subgroup matrices indexed in a loop is kept in local
// memory by the Vulkan driver on NVIDIA, which made the kernel slower than the scalar one. K is
// walked in BK chunks staged in workgroup memory, two buffers: the next chunk is fetched while
// the current one is multiplied, so one barrier per chunk suffices. Staged rows are padded by 8
// halves: fragment rows stay 16-byte aligned and consecutive rows start on different banks.
// How a chunk gets from storage to workgroup memory is the plan's variant (SG_FETCH: 8- or
// 16-byte loads; sgmat_fetch.wgsl).
//
// Conditions the plan guarantees: A is K-contiguous (a_ks == 1), B is N-contiguous (b_ns == 1)
// or, with B_KFAST, K-contiguous (b_ks == 1); the contiguous extents, the other strides and all
// offsets are multiples of 4 (so a vec4 starting in range lies wholly in range), of 8 for the
// 16-byte loads (SG_FETCH 1); the subgroup size is fixed at SGS. Out-of-range rows and
// K are staged as zeros; the epilogue writes each fragment through workgroup memory so partial
// tiles and the f32 -> f16 conversion need no special case.
// Defines: BM BN BK FM FN SM SN SK SGS, B_KFAST, O_MODE (0 scalar, 1 vec4 stores), SG_FETCH
// (0 8-byte loads, 1 16-byte loads), ABL (ablation, wrong results), and the matmul_io.wgsl
// defines (A_STORE = B_STORE = 1, A_VEC = B_VEC = true, VEC8 with SG_FETCH 1).
enable f16;
enable chromium_experimental_subgroup_matrix;

alias CT = f16;
#include "matmul_io"

// Element e of B's chunk (vec4 or 8-half group e): row n of B_KFAST's n-rows, else k-row k.
#if SG_FETCH == 1
const BG: u32 = 8u;  // halves per register element: 16-byte loads
alias RB = array<vec4<u32>, BN * BK / 8u / NT>;
#else
const BG: u32 = 4u;  // 8-byte loads
alias RB = array<vec4<f16>, LB4>;
#endif
const LBR: u32 = BN * BK / BG / NT;  // register elements of B per invocation per chunk
fn fetch_b(lid: u32, base: u32, n0: u32, k0: u32) -> RB {
  var r: RB;
  for (var i = 0u; i < LBR; i++) {
    let e = lid + i * NT;
#if B_KFAST
    let n = n0 + e / (BK / BG);
    let k = k0 + (e % (BK / BG)) * BG;
    if (n < p.N && k < p.K) { r[i] = b[(base + n * p.b_ns + k) / BG]; }
#else
    let k = k0 + e / (BN / BG);
    let n = n0 + (e % (BN / BG)) * BG;
    if (n < p.N && k < p.K) { r[i] = b[(base + k * p.b_ks + n) / BG]; }
#endif
  }
  return r;
}
fn stage_b(lid: u32, buf: u32, r: ptr<function, RB>) {
  for (var i = 0u; i < LBR; i++) {
    let e = lid + i * NT;
#if B_KFAST
    let at = buf * B_BUF + (e / (BK / BG)) * BST + (e % (BK / BG)) * BG;
#else
    let at = buf * B_BUF + (e / (BN / BG)) * BST + (e % (BN / BG)) * BG;
#endif
#if SG_FETCH == 1
    put8_b(at, (*r)[i]);
#else
    let v = (*r)[i];
    Bs[at] = v.x; Bs[at + 1u] = v.y; Bs[at + 2u] = v.z; Bs[at + 3u] = v.w;
#endif
  }
}

fn store4(o_base: u32, m: u32, n: u32, v: vec4<f32>) { st4(o_base + m * p.o_rs + n, v); }
fn store1(o_base: u32, m: u32, n: u32, v: f32) { st1(o_base + m * p.o_rs + n, v); }

#include "sgmat_core"
