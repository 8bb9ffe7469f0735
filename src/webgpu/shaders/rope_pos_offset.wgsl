// Positions of rope_inplace.wgsl as pos_offset + s (included; declares the params at P_BIND). A separate
// include instead of binding x again as the positions buffer: one buffer bound both
// read_write and read-only in a dispatch is a WebGPU validation error.
@group(0) @binding({{P_BIND}}) var<uniform> params: Params;

fn row_position(s: u32) -> f32 { return f32(params.pos_offset + s); }
