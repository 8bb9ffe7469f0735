// RoPE without per-frequency factors (RopeConfig::freq_factors undefined), included by
// rope_common via ROPE_FREQS: the angle as it is, and no binding, so these kernels are the
// same as before factors existed.
fn rope_freq_div(a: f32, i: u32) -> f32 { return a; }
