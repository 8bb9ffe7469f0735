// RoPE with per-frequency factors (RopeConfig::freq_factors: f32 [n_rot/2], llama.cpp's
// freq_factors), included by rope_common via ROPE_FREQS: pair i's angle is divided by f_i.
// Defines: FREQ_BIND (the binding, after the kernel's other storage buffers), FREQ_OFF (an
// expression for the factors' element offset, from the kernel's params).
@group(0) @binding({{FREQ_BIND}}) var<storage, read> rope_freqs: array<f32>;

fn rope_freq_div(a: f32, i: u32) -> f32 { return a / rope_freqs[{{FREQ_OFF}} + i]; }
