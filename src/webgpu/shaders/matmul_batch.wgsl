// The bases of batch matrix z for the matmul kernels (included, not a kernel): the launcher
// folds the batch dims into at most three (d0, bd1, bd2, kernels/matmul_grid.hpp), each with
// its element stride in A and B; the output's batches are o_bs apart. Reads the includer's
// `p` (fields a_off, b_off, o_off, bd1, bd2, a_bs0..2, b_bs0..2, o_bs, as in matmul_io.wgsl).
// Returns (A base, B base, output base).
fn batch_bases(z: u32) -> vec3<u32> {
  let i2 = z % p.bd2;
  let i1 = (z / p.bd2) % p.bd1;
  let i0 = z / (p.bd2 * p.bd1);
  return vec3<u32>(p.a_off + i0 * p.a_bs0 + i1 * p.a_bs1 + i2 * p.a_bs2,
                   p.b_off + i0 * p.b_bs0 + i1 * p.b_bs1 + i2 * p.b_bs2, p.o_off + z * p.o_bs);
}
