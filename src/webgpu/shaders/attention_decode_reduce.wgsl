// Split-KV attention, pass 2 of 2: combines the n_split partial softmax states of one
// (query, head): M = max m_s, L = sum l_s e^(m_s - M), out = sum acc_s e^(m_s - M) / L.
// One workgroup per (query, head), invocations over the head dims. Defines: O_F16 (packed f16
// output, see attention_out), D.
#include "attention_common"

const D: u32 = {{D}}u;

@group(0) @binding(0) var<storage, read> part_acc: array<f32>;
@group(0) @binding(1) var<storage, read> part_ml: array<f32>;
const O_F16: bool = {{O_F16}};
@group(0) @binding(2) var<storage, read_write> o: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: AttnParams;
#include "attention_out"

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;  // i * heads + h
  if (row >= p.lq * p.heads) { return; }
  let base = row * p.n_split;
  var mx = NEG_BIG;
  for (var s = 0u; s < p.n_split; s++) { mx = max(mx, part_ml[(base + s) * 2u]); }
  var total = 0.0;
  for (var s = 0u; s < p.n_split; s++) {
    let l = part_ml[(base + s) * 2u + 1u];
    if (l > 0.0) { total += l * exp(part_ml[(base + s) * 2u] - mx); }
  }
  let inv = select(0.0, 1.0 / total, total > 0.0);
  for (var d = lid; d < D; d += 64u) {
    var a = 0.0;
    for (var s = 0u; s < p.n_split; s++) {
      if (part_ml[(base + s) * 2u + 1u] > 0.0) {
        a += part_acc[(base + s) * D + d] * exp(part_ml[(base + s) * 2u] - mx);
      }
    }
    store_o(row * D + d, a * inv);
  }
}
