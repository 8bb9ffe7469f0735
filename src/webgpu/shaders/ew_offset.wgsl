// Strided element offsets of the elementwise kernels (included, not a kernel), shared by the
// real (ew_common.wgsl) and complex64 (complex_ew.wgsl) ones. Reads the includer's `params`:
// rank, the collapsed output shape (outermost first), and per input its element offset and
// strides (0 = broadcast), laid out as in ew_common's Params.

// Element offset of logical output index e inside input k.
fn in_offset(e: u32, k: u32) -> u32 {
  var rem = e;
  var off = params.off[k];
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let du = u32(d);
    let s = params.shape[du / 4u][du % 4u];
    off = off + (rem % s) * params.strides[k][du / 4u][du % 4u];
    rem = rem / s;
  }
  return off;
}
