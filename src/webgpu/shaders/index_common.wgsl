// Shared by concat and gather (included, not a kernel): params, strided index decomposition
// over two stride sets at once, and an element copy of any size. Elements are moved as u32
// words; 1- and 2-byte elements use atomicAnd/atomicOr on the destination word so that
// neighbouring elements written by other invocations (or guard bytes) are preserved.

struct IndexParams {
  shape: array<vec4<u32>, 2>,  // iteration dims (coalesced), innermost last
  sa: array<vec4<u32>, 2>,     // source (x) strides, elements
  sb: array<vec4<u32>, 2>,     // concat: destination strides; gather: index strides
  rank: u32, numel: u32, x_off: u32, y_off: u32,
  b_off: u32, ax_stride: u32, ax_size: u32, flag: u32,  // flag: gather's status bit
}

const WG: u32 = 256u;
const EB: u32 = {{EB}}u;  // element bytes: 1, 2, 4 or 8

// (offset along sa, offset along sb) of the e-th element in row-major order of `shape`.
fn offsets(e: u32) -> vec2<u32> {
  var r = e;
  var o = vec2<u32>(0u, 0u);
  for (var d = p.rank; d > 0u; d--) {
    let k = d - 1u;
    let s = p.shape[k >> 2u][k & 3u];
    let i = r % s;
    r /= s;
    o += i * vec2<u32>(p.sa[k >> 2u][k & 3u], p.sb[k >> 2u][k & 3u]);
  }
  return o;
}

// Copies element `src` of x to element `dst` of y (or writes zero bits when `zero`).
fn copy_elem(src: u32, dst: u32, zero: bool) {
  if (EB == 4u) {
    atomicStore(&y[dst], select(x[src], 0u, zero));
  } else if (EB == 8u) {
    atomicStore(&y[2u * dst], select(x[2u * src], 0u, zero));
    atomicStore(&y[2u * dst + 1u], select(x[2u * src + 1u], 0u, zero));
  } else {
    // Written without const-evaluated shifts by 32 or divisions by 0 in the dead branches.
    let epw = select(2u, 4u, EB == 1u);
    let bits = 32u / epw;
    let m = select(0xffffu, 0xffu, EB == 1u);
    var v = (x[src / epw] >> ((src % epw) * bits)) & m;
    if (zero) { v = 0u; }
    let sh = (dst % epw) * bits;
    atomicAnd(&y[dst / epw], ~(m << sh));
    atomicOr(&y[dst / epw], v << sh);
  }
}
