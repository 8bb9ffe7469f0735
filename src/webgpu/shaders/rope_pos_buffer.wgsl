// Positions of rope_inplace.wgsl from an i32 buffer [seq] (included; declares binding 1 and
// the params at P_BIND).
@group(0) @binding(1) var<storage, read> pos_buf: array<i32>;
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

fn row_position(s: u32) -> f32 { return f32(pos_buf[s]); }
