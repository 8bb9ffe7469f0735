// The elementwise ops, one WGSL expression per op code: fn op1(x) (unary kernels) or
// fn op2(x, y) (binary), in f32 or i32. Included by unary, unary_vec4 and binary.
// Defines: OP (a wgt::UnaryOp or BinaryOp value; 255: x as it is, for casts), CT_I32 (compute
// in i32), BINARY. The plan (src/webgpu/plans/elementwise_plan.cpp) emits only ops that have
// a form in the compute type: integer Div, Pow and the transcendental unary ops have none.
#if BINARY
#include "fdiv"
#if CT_I32
fn op2(x: i32, y: i32) -> i32 {
#if OP == 0
  return x + y;
#elif OP == 1
  return x - y;
#elif OP == 2
  return x * y;
#elif OP == 5
  return max(x, y);
#elif OP == 6
  return min(x, y);
#elif OP == 7
  return select(0, 1, x == y);
#elif OP == 8
  return select(0, 1, x != y);
#elif OP == 9
  return select(0, 1, x < y);
#elif OP == 10
  return select(0, 1, x <= y);
#elif OP == 11
  return select(0, 1, x > y);
#elif OP == 12
  return select(0, 1, x >= y);
#endif
}
#else
fn op2(x: f32, y: f32) -> f32 {
#if OP == 0
  return x + y;
#elif OP == 1
  return x - y;
#elif OP == 2
  return x * y;
#elif OP == 3
  return fdiv(x, y);
#elif OP == 4
  return pow_f32(x, y);
#elif OP == 5
  return max_f32(x, y);
#elif OP == 6
  return min_f32(x, y);
#elif OP == 7
  return cmp_f32(x, y, x == y);
#elif OP == 8
  return ne_f32(x, y);
#elif OP == 9
  return cmp_f32(x, y, x < y);
#elif OP == 10
  return cmp_f32(x, y, x <= y);
#elif OP == 11
  return cmp_f32(x, y, x > y);
#elif OP == 12
  return cmp_f32(x, y, x >= y);
#endif
}
#endif
#else
#if CT_I32
fn op1(x: i32) -> i32 {
#if OP == 0
  return -x;
#elif OP == 1
  return abs(x);
#elif OP == 10
  return max(x, 0);
#elif OP == 255
  return x;
#endif
}
#else
fn op1(x: f32) -> f32 {
#if OP == 0
  return -x;
#elif OP == 1
  return abs(x);
#elif OP == 2
  return exp(x);
#elif OP == 3
  return select(log(x), nan_f32(), x < 0.0);
#elif OP == 4
  return select(sqrt(x), nan_f32(), x < 0.0);
#elif OP == 5
  return select(inverseSqrt(x), nan_f32(), x < 0.0);
#elif OP == 6
  return sin(reduce_2pi(x));
#elif OP == 7
  return cos(reduce_2pi(x));
#elif OP == 8
  return tanh_f32(x);
#elif OP == 9
  return sigmoid_f32(x);
#elif OP == 10
  return relu_f32(x);
#elif OP == 11
  return 0.5 * x * (1.0 + erf_f32(x * 0.7071067811865476));
#elif OP == 12
  return 0.5 * x * (1.0 + tanh_f32(0.7978845608028654 * (x + 0.044715 * x * x * x)));
#elif OP == 13
  return x * sigmoid_f32(x);
#elif OP == 14 || OP == 15
  return x;  // conj, real of a real dtype (c64: kernels/complex.cpp)
#elif OP == 16
  return 0.0;  // imag of a real dtype
#elif OP == 255
  return x;
#endif
}
#endif
#endif
