// store(e, v) and add_to(e, v): element e of the output `y` (array<atomic<u32>>) set to v or
// increased by v, by the element's only writer. A 16-bit element shares its word with a
// neighbour another invocation may write: store replaces its half with atomicAnd/atomicOr,
// add_to exchanges the word in a loop, which never disturb the other half (included, not a
// kernel).
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

fn add_to(e: u32, v: f32) {
  let wi = select(e >> 1u, e, VT == 0u);
  loop {
    let old = atomicLoad(&y[wi]);
    var nw: u32;
    if (VT == 0u) {
      nw = bitcast<u32>(bitcast<f32>(old) + v);
    } else {
      let sh = 16u * (e & 1u);
      nw = (old & ~(0xffffu << sh)) | (bits_of(val_of(old, e) + v) << sh);
    }
    if (atomicCompareExchangeWeak(&y[wi], old, nw).exchanged) { break; }
  }
}
