// Shared by the matmul kernels (included, not a kernel): params and bindings a, b, o[, c][, g], p.
// C_DECL declares the addend c at binding 3, G_DECL the RMSNorm weight g of the vector gemv's
// prologue at the next binding, or they are empty; params at P_BIND, the binding after them.
// Mirrors MatmulParams in kernels/matmul.cpp (element units).
struct Params {
  M: u32, N: u32, K: u32, batch_base: u32,
  a_off: u32, a_ms: u32, a_ks: u32, o_off: u32,
  b_off: u32, b_ks: u32, b_ns: u32, o_rs: u32,
  o_bs: u32, bd1: u32, bd2: u32, c_off: u32,
  a_bs0: u32, a_bs1: u32, a_bs2: u32, g_off: u32,
  b_bs0: u32, b_bs1: u32, b_bs2: u32, eps_bits: u32,
  // The rope_append epilogue of the vector gemv (matmul_epi_rope_append.wgsl); unused elsewhere.
  r_pos: u32, r_qn: u32, r_kvn: u32, r_hd: u32,
  r_nrot: u32, r_base_log2: f32, r_freq_scale: f32, r_f_off: u32,
}

@group(0) @binding(0) var<storage, read> a: array<{{A_ELEM}}>;
@group(0) @binding(1) var<storage, read> b: array<{{B_ELEM}}>;
@group(0) @binding(2) var<storage, read_write> o: array<{{O_ELEM}}>;
{{C_DECL}}
{{G_DECL}}
@group(0) @binding({{P_BIND}}) var<uniform> p: Params;
