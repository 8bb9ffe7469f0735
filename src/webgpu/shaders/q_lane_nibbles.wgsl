// The streaming matvec's x side for the 32-element formats with Q4_0's nibble order (Q4_0,
// Q4_1, Q5_0, Q5_1): SLOTS lanes per block; part p takes code bytes 8p..8p+7, whose low
// nibbles are elements 8p..8p+7 and high nibbles elements QK/2 + 8p..; lane_x loads those 16
// x values once for all the lane's rows, with their sum (for the zero point or the min).
// The including lane shader defines lane_dot.
const SLOTS: u32 = 2u;
const PART: u32 = QK / 2u / SLOTS;  // code bytes per lane

struct LaneX {
  lo0: vec4<f32>,  // x of the low nibbles
  lo1: vec4<f32>,
  hi0: vec4<f32>,  // x of the high nibbles
  hi1: vec4<f32>,
  sum: f32,
};

fn lane_x(x4: u32, b: u32, part: u32) -> LaneX {
  let lo = x4 + (b * QK + part * PART) / 4u;
  let hi = lo + QK / 2u / 4u;
  let a = xload(lo);
  let c = xload(lo + 1u);
  let e = xload(hi);
  let f = xload(hi + 1u);
  return LaneX(a, c, e, f, dot(a + c + e + f, vec4<f32>(1.0)));
}
