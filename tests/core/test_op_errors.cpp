// Every ErrorKind the op API raises, with the op named in the error: undefined inputs,
// mixed devices, dtypes, ranks, shapes, axes, unsupported kernels, device state.
#include "ref_test_util.hpp"

using namespace wgt;
using namespace wgt::test;

using OpErrors = RefTest;

namespace {
// A tensor whose storage claims to live on webgpu:0 without any device behind it: enough to
// exercise the front-ends' device checks on a machine without a GPU (nothing reads it).
Tensor fake_webgpu_tensor(const Shape& s) {
  auto st = std::make_shared<Storage>(static_cast<size_t>(checked_numel(s)) * 4, Device::webgpu(0));
  return Tensor(st, s, contiguous_strides(s), 0, DType::F32);
}
}  // namespace

TEST_F(OpErrors, UndefinedInputsAreInvalidArgument) {
  Tensor u, x = F({1, 2}, {2});
  EXPECT_WGT_ERROR(exp(u), InvalidArgument, "exp");
  EXPECT_WGT_ERROR(add(x, u), InvalidArgument, "add");
  EXPECT_WGT_ERROR(add(u, 1.0), InvalidArgument, "add");
  EXPECT_WGT_ERROR(matmul(u, x), InvalidArgument, "matmul");
  EXPECT_WGT_ERROR(sum(u), InvalidArgument, "sum");
  EXPECT_WGT_ERROR(softmax(u), InvalidArgument, "softmax");
  EXPECT_WGT_ERROR(rms_norm(x, u), InvalidArgument, "rms_norm");
  EXPECT_WGT_ERROR(cast(u, DType::F16), InvalidArgument, "cast");
  EXPECT_WGT_ERROR(concat({x, u}, 0), InvalidArgument, "concat");
  EXPECT_WGT_ERROR(where(u, x, x), InvalidArgument, "where");
  EXPECT_WGT_ERROR(scalar_like(u, 1), InvalidArgument, "scalar_like");
}

TEST_F(OpErrors, MixedDevicesNameBothDevices) {
  Tensor c = F({1, 2}, {2}), g = fake_webgpu_tensor({2});
  auto check = [](auto&& f, const char* op) {
    try {
      f();
      ADD_FAILURE() << op << " did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
      EXPECT_EQ(e.op(), op);
      EXPECT_NE(e.message().find("cpu"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("webgpu:0"), std::string::npos) << e.what();
    }
  };
  check([&] { return add(c, g); }, "add");
  check([&] { return where(B({1, 0}, {2}), c, g); }, "where");
  check([&] { return matmul(c, g); }, "matmul");
  check([&] { return concat({c, g}, 0); }, "concat");
  check([&] { return layer_norm(c, g); }, "layer_norm");
  check([&] { return index_select(c, 0, g); }, "index_select");
  check([&] { return gather(g, 0, I64({0}, {1})); }, "gather");
  // Host access to device memory is a state error that says how to read it.
  EXPECT_WGT_ERROR(g.data_ptr(), RuntimeState, "Tensor::data_ptr");
}

TEST_F(OpErrors, DTypeRules) {
  Tensor i = I32({1, 2}, {2}), b = B({1, 0}, {2});
  EXPECT_WGT_ERROR(exp(i), DTypeMismatch, "exp");
  EXPECT_WGT_ERROR(gelu(i), DTypeMismatch, "gelu");
  EXPECT_WGT_ERROR(neg(b), DTypeMismatch, "neg");
  EXPECT_WGT_ERROR(sub(b, b), DTypeMismatch, "sub");
  EXPECT_WGT_ERROR(matmul(b.view({1, 2}), b.view({2, 1})), DTypeMismatch, "matmul");
  EXPECT_WGT_ERROR(softmax(i), DTypeMismatch, "softmax");
  EXPECT_WGT_ERROR(rms_norm(i), DTypeMismatch, "rms_norm");
  EXPECT_WGT_ERROR(index_select(F({1}, {1}), 0, U8({0}, {1})), DTypeMismatch, "index_select");
  EXPECT_WGT_ERROR(gather(F({1}, {1}), 0, F({0}, {1})), DTypeMismatch, "gather");
  EXPECT_WGT_ERROR(rand_normal({2}, 0, 0, 1, DType::C64), DTypeMismatch, "rand_normal");
}

TEST_F(OpErrors, ShapesRanksAxes) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_WGT_ERROR(add(a, F({1, 2}, {2})), ShapeMismatch, "add");
  EXPECT_WGT_ERROR(where(B({1, 0}, {2}), a, a), ShapeMismatch, "where");
  EXPECT_WGT_ERROR(softmax(a, -3), OutOfRange, "softmax");
  EXPECT_WGT_ERROR(softmax(F({1}, {}), 0), OutOfRange, "softmax");
  EXPECT_WGT_ERROR(argmax(a, 2), OutOfRange, "argmax");
  EXPECT_WGT_ERROR(concat({a}, 5), OutOfRange, "concat");
  EXPECT_WGT_ERROR(index_select(a, -3, I64({0}, {1})), OutOfRange, "index_select");
  EXPECT_WGT_ERROR(index_select(Tensor::empty({0, 2}, DType::F32), 0, I64({0}, {1})), OutOfRange, "index_select");
  EXPECT_WGT_ERROR(mean(a, {0, 0}), InvalidArgument, "mean");
  EXPECT_WGT_ERROR(matmul(F({1}, {}), a), RankMismatch, "matmul");
  EXPECT_WGT_ERROR(layer_norm(a, std::nullopt, F({1, 2}, {2})), ShapeMismatch, "layer_norm");
}

TEST_F(OpErrors, UnsupportedNamesOpAndBackend) {
  std::vector<c64_t> cv = {{1, 0}};
  Tensor c = Tensor::from_vector(cv, {1});
  try {
    (void)sqrt(c);
    ADD_FAILURE() << "sqrt(c64) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.op(), "sqrt");
    EXPECT_NE(e.message().find("cpu-reference"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("c64"), std::string::npos) << e.what();
  }
  EXPECT_WGT_ERROR(softmax(c), DTypeMismatch, "softmax");  // meaningless for complex: not "unsupported"
  EXPECT_WGT_ERROR(log(c), Unsupported, "log");  // c64 log is not implemented (mean is: Reduce.*)
}
