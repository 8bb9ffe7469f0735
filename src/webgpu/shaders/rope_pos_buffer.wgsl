// Positions of rope_inplace.wgsl from an i32 buffer [seq] (included; declares bindings 1, 2).
@group(0) @binding(1) var<storage, read> pos_buf: array<i32>;
@group(0) @binding(2) var<uniform> params: Params;

fn row_position(s: u32) -> f32 { return f32(pos_buf[s]); }
