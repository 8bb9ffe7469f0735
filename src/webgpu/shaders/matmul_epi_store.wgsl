// The plain epilogue of matmul_gemv_vec.wgsl (included via EPI_INC, not a kernel): every sum
// is stored by st1 in the main loop, so the pair hook is never called.
const EPI: bool = false;
fn epi_pair(o_base: u32, n: u32, x: f32, y: f32) {}
