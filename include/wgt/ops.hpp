// Public operations as free functions. Every function validates its arguments and throws
// wgt::Error; the runtime chooses the backend (see wgt/runtime.hpp).
#pragma once
#include <optional>
#include <vector>

#include "wgt/tensor.hpp"

namespace wgt {

enum class UnaryOp : uint8_t {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Relu, GeluErf, GeluTanh, Silu,
  Conj, Real, Imag,  // complex parts (identity / real part / zeros for real dtypes)
};
enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge,
};
enum class ReduceOp : uint8_t { Sum, Mean, Max, Min, Prod, ArgMax };

const char* unary_op_name(UnaryOp);
const char* binary_op_name(BinaryOp);
const char* reduce_op_name(ReduceOp);
inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

// ---- elementwise ----
Tensor unary(UnaryOp op, const Tensor& x);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);  // relative accuracy near 0 (tanh(1e-10) = 1e-10), NaN -> NaN
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
enum class GeluApprox { Erf, Tanh };
Tensor gelu(const Tensor& x, GeluApprox approx = GeluApprox::Erf);
Tensor silu(const Tensor& x);
// Complex (c64) parts: conj keeps c64; real, imag and abs give f32 (abs = hypot(re, im),
// without overflow or underflow of the squares). exp of c64 is the complex exponential.
// On real dtypes conj and real return x itself and imag zeros of x's dtype.
Tensor conj(const Tensor& x);
Tensor real(const Tensor& x);
Tensor imag(const Tensor& x);

// Binary ops broadcast (numpy rules) and promote dtypes; comparisons return Bool.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
// Scalar right operand (a 0-d tensor of a's dtype on a's device).
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor scalar_like(const Tensor& like, double value);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }

// cond (Bool) ? a : b, all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// Conversion between any two dtypes (float->int truncates toward zero and saturates to the
// target's range, NaN -> 0; ->Bool is x != 0, NaN -> true; int->int wraps; f32->f16/bf16
// rounds to nearest even, overflow -> inf; complex->real takes the real part). Every
// backend: docs/semantics.md.
Tensor cast(const Tensor& x, DType dtype);

// ---- creation ----
Tensor full(const Shape& shape, double value, DType dtype = DType::F32, Device device = Device::cpu());
Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
// [start, stop) with step; numel = ceil((stop-start)/step).
Tensor arange(double start, double stop, double step = 1.0, DType dtype = DType::F32,
              Device device = Device::cpu());
// Counter-based random numbers: the value at flat index i depends only on (seed, i), so every
// backend produces the same tensor. uniform in [low, high); normal via Box-Muller.
Tensor rand_uniform(const Shape& shape, uint64_t seed, double low = 0.0, double high = 1.0,
                    DType dtype = DType::F32, Device device = Device::cpu());
Tensor rand_normal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
                   DType dtype = DType::F32, Device device = Device::cpu());

// ---- reductions ----
// `axes` empty = all axes. Negative axes allowed; duplicates rejected.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor min(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
// Index (I64) of the first maximum along one axis.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim = false);

// ---- linear algebra ----
// a: [..., M, K], b: [..., K, N] -> [..., M, N]; batch dims broadcast; 1-D operands are
// promoted like numpy.matmul.
Tensor matmul(const Tensor& a, const Tensor& b);
// a: [..., M, K], b: [..., N, K] -> [..., M, N] (b used transposed, as in x @ W^T).
Tensor matmul_t(const Tensor& a, const Tensor& b);
// c + a @ b^T with c of the result's shape and dtype (a residual or a broadcast bias, e.g.
// expand()ed from [N]); one fused kernel where the backend has one (the WebGPU small-M
// matvec adds c in its epilogue), else the matmul and an add.
Tensor addmm_t(const Tensor& c, const Tensor& a, const Tensor& b);
// rms_norm(x, weight, eps) @ w^T: the normalization fused into the product where the backend
// can (the WebGPU small-M matvec normalizes x while staging it, so a transformer decode step
// saves the norm's dispatch), else the norm and then the product. weight: [K] of x's dtype.
// Same definition as the pair, huge rows included (docs/semantics.md, "Normalization").
Tensor rms_norm_matmul_t(const Tensor& x, const Tensor& weight, const Tensor& w, double eps = 1e-6);
// [c +] silu_mul(gate, up) @ w^T (the SwiGLU down projection, with the residual c): fused on
// WebGPU like rms_norm_matmul_t (silu(gate) * up computed while staging x), else silu_mul then
// the product. gate and up: one shape and dtype.
Tensor silu_mul_matmul_t(const Tensor& gate, const Tensor& up, const Tensor& w,
                         const std::optional<Tensor>& c = std::nullopt);

// ---- normalization / softmax ----
// A row with a NaN or +inf entry, or with every entry -inf, is all NaN on every backend; -inf
// entries of other rows give 0 (log_softmax: -inf) (docs/semantics.md).
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// Over the last dim: x / sqrt(mean(x^2) + eps) * weight (weight optional, shape [D]). No
// overflow for finite x on any backend (rms_norm([3e19, 1, 1, 1]) is finite; docs/semantics.md).
Tensor rms_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt, double eps = 1e-6);
// Over the last dim: (x - mean) / sqrt(var + eps) * weight + bias (both optional, shape [D]).
// No overflow for finite x (layer_norm([1e38, -1e38, 0]) is [1.22, -1.22, 0]); an inf or NaN
// element makes the row NaN (docs/semantics.md).
Tensor layer_norm(const Tensor& x, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// ---- shape / indexing ----
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
// Copying slice (the view is Tensor::slice).
Tensor slice_copy(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1);
// Selects entries along `axis` by integer (I32/I64) indices of any shape:
// out.shape = x.shape[:axis] + idx.shape + x.shape[axis+1:]. Indices out of range (negative
// included) -> OutOfRange naming the op: at once on the CPU; on a device at the next read-back
// or synchronize (the kernel flags it; docs/semantics.md). Same for gather.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& indices);
// torch.gather: out[i..][j][k..] = x[i..][idx[i..][j][k..]][k..]; idx has x's rank.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& indices);

}  // namespace wgt
