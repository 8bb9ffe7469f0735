// Q8_0 part of the streaming matvec: SLOTS lanes per 32-element block, each taking 16
// consecutive int8 codes (four u32, realigned branch-free: 34-byte blocks start 2 bytes into
// a word every other block) and the block scale: d * sum(q * x). 16 rather than 8 codes per
// lane: one scale read per 16 codes, and more independent loads per lane.
const SLOTS: u32 = 2u;
const PART: u32 = QK / SLOTS;  // elements per lane

struct LaneX {
  a: vec4<f32>,
  b: vec4<f32>,
  c: vec4<f32>,
  d: vec4<f32>,
};

fn lane_x(x4: u32, b: u32, part: u32) -> LaneX {
  let xi = x4 + (b * QK + part * PART) / 4u;
  return LaneX(xload(xi), xload(xi + 1u), xload(xi + 2u), xload(xi + 3u));
}

fn lane_dot(blk: u32, part: u32, v: LaneX) -> f32 {
  let q = bytes16_at(blk + Q_OFF_QS + part * PART);
  let s = dot(i8x4(q.x), v.a) + dot(i8x4(q.y), v.b) + dot(i8x4(q.z), v.c) + dot(i8x4(q.w), v.d);
  return half_at(blk + Q_OFF_D) * s;
}
