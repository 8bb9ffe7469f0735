// Row reductions of the register-cached row kernels (*_row_v4.wgsl; included after
// reduce_common, not a kernel). With SG (the launcher's choice when the adapter has subgroups of
// one fixed size) a value is reduced within each subgroup (subgroupAdd / subgroupMax), each
// subgroup's lane 0 writes its result to workgroup memory, and after ONE barrier every invocation
// combines those few partials itself; without SG it is reduce_common's tree (log2(WG) barriers).
// Defines: SG (true / false); with SG the including kernel enables subgroups and takes the
// subgroup builtins sgs / sgl as entry-point parameters, without it lets them be 1 and 0
// (#if SG in each *_row_v4.wgsl). The subgroup layout assumed is the one Vulkan drivers
// use for a fixed subgroup size: subgroup i holds local invocations [i*size, (i+1)*size).

const SG: bool = {{SG}};
const SG_SLOT: u32 = 64u;  // WG / smallest subgroup size accepted by the launcher (4)

// Two slots: consecutive reductions use different ones, so no barrier is needed between them
// to protect the partials a slow invocation may still be reading.
var<workgroup> sg_part: array<f32, 2u * SG_SLOT>;

#if SG
fn sg_add_or(v: f32) -> f32 { return subgroupAdd(v); }
fn sg_max_or(v: f32) -> f32 { return subgroupMax(v); }
#else
fn sg_add_or(v: f32) -> f32 { return v; }
fn sg_max_or(v: f32) -> f32 { return v; }
#endif

// op: 0 sum, 2 max (ReduceOp codes). Call from workgroup-uniform control flow.
fn row_reduce(op: u32, v: f32, lid: u32, sgs: u32, sgl: u32, slot: u32) -> f32 {
  if (!SG) { return wg_reduce(op, v, lid); }
  var r: f32;
  if (op == 2u) { r = sg_max_or(v); } else { r = sg_add_or(v); }
  if (sgl == 0u) { sg_part[slot * SG_SLOT + lid / sgs] = r; }
  workgroupBarrier();
  let nsg = WG / sgs;
  var acc = sg_part[slot * SG_SLOT];
  for (var i = 1u; i < nsg; i++) {
    let q = sg_part[slot * SG_SLOT + i];
    // nmax keeps a NaN even where the subgroup max dropped it inside a subgroup (the sums of
    // the callers still carry it).
    if (op == 2u) { acc = nmax(acc, q); } else { acc += q; }
  }
  return acc;
}
