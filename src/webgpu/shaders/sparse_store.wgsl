// store(e, v): element e of the output `y` (array<atomic<u32>>). A 16-bit element shares its
// word with a neighbour another invocation may write: the halves are replaced with
// atomicAnd/atomicOr, which never disturb the other half (included, not a kernel).
fn store(e: u32, v: f32) {
  let b = bits_of(v);
  if (VT == 0u) {
    atomicStore(&y[e], b);
  } else {
    let sh = 16u * (e & 1u);
    atomicAnd(&y[e >> 1u], ~(0xffffu << sh));
    atomicOr(&y[e >> 1u], b << sh);
  }
}
