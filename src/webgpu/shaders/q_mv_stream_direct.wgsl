// Weight source of the streaming matvec (q_mv_stream_common) that reads the packed rows
// straight from global memory: every lane issues its own scalar u32 loads (the q_bytes
// helpers). Works for any row length.
@group(0) @binding(1) var<storage, read> w: array<u32>;

// Adds this lane's part of block b of every row to acc. Rows past cnt repeat the last
// valid row (ro below): their loads stay in bounds and their sums are never stored, so the
// inner loop has a constant trip count and no per-row branch.
fn add_block(acc: ptr<function, array<f32, ROWS>>, ro: ptr<function, array<u32, ROWS>>, x4: u32, b: u32, part: u32) {
  let xv = lane_x(x4, b, part);
  let bo = b * Q_BLOCK_BYTES;
  for (var r = 0u; r < ROWS; r = r + 1u) { (*acc)[r] = (*acc)[r] + lane_dot((*ro)[r] + bo, part, xv); }
}

// This lane's parts of the dot products of rows n0 .. n0 + cnt - 1 with x row m (zeros when
// cnt == 0). UNROLL blocks per trip of the main loop (a constant trip count the driver can
// unroll), so each lane has UNROLL * ROWS independent sets of weight loads in flight; the
// tail takes the rest one block at a time.
fn warp_partials(m: u32, n0: u32, cnt: u32, lane: u32, warp: u32) -> array<f32, ROWS> {
  var acc: array<f32, ROWS>;
  if (cnt == 0u) { return acc; }  // a warp past the last row: no barriers here to join
  let nb = p.k / QK;
  var ro: array<u32, ROWS>;
  for (var r = 0u; r < ROWS; r = r + 1u) { ro[r] = (n0 + min(r, cnt - 1u)) * p.row_bytes; }
  let x4 = m * (p.k / 4u);
  let part = lane % SLOTS;
  let stride = LANES / SLOTS;
  var b = lane / SLOTS;
  for (; b + (UNROLL - 1u) * stride < nb; b = b + UNROLL * stride) {
    for (var u = 0u; u < UNROLL; u = u + 1u) { add_block(&acc, &ro, x4, b + u * stride, part); }
  }
  for (; b < nb; b = b + stride) { add_block(&acc, &ro, x4, b, part); }
  return acc;
}
