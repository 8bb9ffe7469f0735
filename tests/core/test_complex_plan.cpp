// Kernel choice of the WebGPU complex64 family (src/webgpu/plans/complex_plan.*) without a GPU:
// which calls it owns, the matmul algorithm by size and through the tuning override, tiles by
// the adapter's workgroup memory, typed errors for bad tiles, rejects, the reduction kernel by
// size, and every variant's WGSL through the preprocessor.
#include <gtest/gtest.h>

#include "plan_test_support.hpp"

#include <set>
#include <string>

#include "webgpu/plans/complex_plan.hpp"
#include "webgpu/shader_registry.hpp"
#include "wgt/wgt.hpp"

using namespace wgt;
using namespace wgt::webgpu;

namespace {

using test::Adapter;
using test::big_gpu;
using test::webgpu_defaults;

// A matmul call on c64 operands of these shapes; broadcast views of one element, so large
// shapes cost no memory (the output is an out_spec, as supports() sees it).
OpCall mm(const Shape& as, const Shape& bs, bool tb = false, DType dt = DType::C64) {
  const Tensor one = Tensor::empty({1}, dt);
  Tensor a = one.view(Shape(as.size(), 1)).expand(as), b = one.view(Shape(bs.size(), 1)).expand(bs);
  Shape os = as.size() >= bs.size() ? as : bs;
  os[os.size() - 2] = as[as.size() - 2];
  os[os.size() - 1] = tb ? bs[bs.size() - 2] : bs[bs.size() - 1];
  OpCall c{OpKind::MatMul, "matmul", {a, b}, {}, {}};
  c.out_specs = {{os, dt}};
  c.attrs.transpose_b = tb;
  return c;
}

using test::expect_variant_expands;

TEST(ComplexPlan, OwnsCallsOnC64Data) {
  const Tensor z = Tensor::empty({2}, DType::C64), x = Tensor::empty({2}, DType::F32);
  OpCall add{OpKind::Binary, "add", {z, z}, {}, {}};
  EXPECT_TRUE(is_complex_call(add));
  OpCall fadd{OpKind::Binary, "add", {x, x}, {}, {}};
  EXPECT_FALSE(is_complex_call(fadd));
  OpCall to_c{OpKind::Cast, "cast", {x}, {}, {}};
  to_c.out_specs = {{{2}, DType::C64}};
  EXPECT_TRUE(is_complex_call(to_c));
  OpCall copy{OpKind::Copy, "contiguous", {z}, {}, {}};  // bit moves stay with the copy kernel
  EXPECT_FALSE(is_complex_call(copy));
  OpCall re{OpKind::Unary, "real", {x}, {}, {}};
  re.attrs.unary = UnaryOp::Real;
  re.out_specs = {{{2}, DType::F32}};
  EXPECT_TRUE(is_complex_call(re));  // and rejected: not a c64 input
  EXPECT_FALSE(plan_complex_ew(big_gpu().caps(), re).ok());
}

TEST(ComplexPlan, MatmulAlgorithmAndOverride) {
  const Adapter gpu = big_gpu();
  MatmulTuning tu;
  Planned<ComplexMatmulPlan> big = plan_complex_matmul(gpu.caps(), tu, mm({4096, 4096}, {4096, 4096}));
  ASSERT_TRUE(big.ok()) << big.reject;
  EXPECT_FALSE(big.plan.shader.three);  // four products unless the tuning asks for three
  EXPECT_EQ(big.plan.shader.bm, 64);
  EXPECT_EQ(big.plan.shader.bk, 8);
  Planned<ComplexMatmulPlan> small = plan_complex_matmul(gpu.caps(), tu, mm({37, 29}, {29, 19}));
  ASSERT_TRUE(small.ok()) << small.reject;
  EXPECT_FALSE(small.plan.shader.three);
  EXPECT_EQ(small.plan.shader.bm, 32);  // too few 64x64 tiles to fill the GPU
  tu.c64 = ComplexAlgo::FourMult;
  EXPECT_FALSE(plan_complex_matmul(gpu.caps(), tu, mm({4096, 4096}, {4096, 4096})).plan.shader.three);
  tu.c64 = ComplexAlgo::ThreeMult;
  EXPECT_TRUE(plan_complex_matmul(gpu.caps(), tu, mm({5, 3}, {3, 2})).plan.shader.three);
  // The two algorithms are two pipelines, and their names say which ran.
  tu.c64 = ComplexAlgo::FourMult;
  const ComplexMatmulPlan p4 = plan_complex_matmul(gpu.caps(), tu, mm({5, 3}, {3, 2})).plan;
  tu.c64 = ComplexAlgo::ThreeMult;
  const ComplexMatmulPlan p3 = plan_complex_matmul(gpu.caps(), tu, mm({5, 3}, {3, 2})).plan;
  EXPECT_FALSE(p4.key() == p3.key());
  EXPECT_NE(p4.name().find("mm4"), std::string::npos) << p4.name();
  EXPECT_NE(p3.name().find("mm3"), std::string::npos) << p3.name();
  expect_variant_expands(p4.variant());
  expect_variant_expands(p3.variant());
}

TEST(ComplexPlan, TilesFitTheDevice) {
  const Adapter small = webgpu_defaults();
  MatmulTuning tu;
  tu.c64 = ComplexAlgo::ThreeMult;
  // 16 KiB: the 64x64 tile only with BK = 4.
  const ComplexMatmulPlan p = plan_complex_matmul(small.caps(), tu, mm({4096, 4096}, {4096, 4096})).plan;
  EXPECT_EQ(p.shader.bm, 64);
  EXPECT_EQ(p.shader.bk, 4);
  EXPECT_LE(complex_tile_smem_bytes(p.shader.bm, p.shader.bn, p.shader.bk, true), small.l.max_compute_workgroup_storage_size);
  // A forced tile the device cannot run is a typed error, not a silent change.
  tu.c64_tile = std::array<uint32_t, 5>{128, 128, 8, 4, 4};
  try {
    (void)plan_complex_matmul(small.caps(), tu, mm({64, 64}, {64, 64}));
    ADD_FAILURE() << "an oversized c64 tile was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << e.what();
  }
  tu.c64_tile = std::array<uint32_t, 5>{32, 32, 8, 3, 4};
  EXPECT_THROW((void)plan_complex_matmul(small.caps(), tu, mm({64, 64}, {64, 64})), Error);
  tu.c64_tile = std::array<uint32_t, 5>{64, 32, 4, 8, 4};
  const ComplexMatmulPlan q = plan_complex_matmul(small.caps(), tu, mm({64, 64}, {64, 64})).plan;
  EXPECT_EQ(q.shader.tm, 8);
  expect_variant_expands(q.variant());
}

TEST(ComplexPlan, MatmulRejectsWhatItCannotRun) {
  const Adapter gpu = big_gpu();
  OpCall mixed = mm({4, 4}, {4, 4});
  mixed.inputs[1] = Tensor::empty({4, 4}, DType::F32);  // f32
  EXPECT_NE(plan_complex_matmul(gpu.caps(), {}, mixed).reject.find("c64"), std::string::npos);
  OpCall pro = mm({4, 4}, {4, 4});
  pro.attrs.prologue = OpAttrs::Prologue::RmsNorm;
  pro.inputs.push_back(Tensor::empty({4}, DType::C64));
  EXPECT_FALSE(plan_complex_matmul(gpu.caps(), {}, pro).ok());
  OpCall bad = mm({4, 5}, {4, 4});
  EXPECT_NE(plan_complex_matmul(gpu.caps(), {}, bad).reject.find("shape"), std::string::npos);
  // Transposed operands are read through their strides; stride-0 (broadcast) matrices have no
  // unit stride and are compacted.
  const Tensor a = Tensor::empty({6, 8}, DType::C64);
  OpCall t{OpKind::MatMul, "matmul", {a.t(), a}, {}, {}};
  t.out_specs = {{{8, 8}, DType::C64}};
  const ComplexMatmulPlan tp = plan_complex_matmul(gpu.caps(), {}, t).plan;
  EXPECT_FALSE(tp.compact_a);
  EXPECT_FALSE(tp.shader.a_kfast);  // a.t() has its unit stride along M
  EXPECT_TRUE(plan_complex_matmul(gpu.caps(), {}, mm({4, 4}, {4, 4})).plan.compact_a);
}

TEST(ComplexPlan, ElementwiseRoutesAndCasts) {
  const Adapter gpu = big_gpu();  // Caps refers to it: it must outlive caps
  const Caps caps = gpu.caps();
  const Tensor z = Tensor::empty({3}, DType::C64);
  auto cast_call = [](const Tensor& x, DType to) {
    OpCall c{OpKind::Cast, "cast", {x}, {}, {}};
    c.out_specs = {{x.shape(), to}};
    return c;
  };
  const ComplexEwPlan to_f32 = plan_complex_ew(caps, cast_call(z, DType::F32)).plan;
  EXPECT_EQ(to_f32.shader.op, ComplexEwOp::Real);
  EXPECT_FALSE(to_f32.post_cast);
  const ComplexEwPlan to_bool = plan_complex_ew(caps, cast_call(z, DType::Bool)).plan;
  EXPECT_EQ(to_bool.shader.op, ComplexEwOp::Nonzero);
  EXPECT_TRUE(to_bool.post_cast);
  const ComplexEwPlan from_i32 = plan_complex_ew(caps, cast_call(Tensor::empty({3}, DType::I32), DType::C64)).plan;
  EXPECT_EQ(from_i32.shader.op, ComplexEwOp::FromReal);
  EXPECT_TRUE(from_i32.pre_cast);
  EXPECT_FALSE(plan_complex_ew(caps, cast_call(z, DType::I64)).ok());
  EXPECT_FALSE(plan_complex_ew(caps, cast_call(Tensor::empty({3}, DType::F64), DType::C64)).ok());
  OpCall pw{OpKind::Binary, "pow", {z, z}, {}, {}};
  pw.attrs.binary = BinaryOp::Pow;
  pw.out_specs = {{{3}, DType::C64}};
  EXPECT_NE(plan_complex_ew(caps, pw).reject.find("pow"), std::string::npos);
  // Every op's variant preprocesses, and distinct ops are distinct pipelines.
  std::set<std::string> keys;
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Eq, BinaryOp::Ne}) {
    OpCall c{OpKind::Binary, binary_op_name(op), {z, z}, {}, {}};
    c.attrs.binary = op;
    c.out_specs = {{{3}, is_comparison(op) ? DType::Bool : DType::C64}};
    Planned<ComplexEwPlan> p = plan_complex_ew(caps, c);
    ASSERT_TRUE(p.ok()) << p.reject;
    expect_variant_expands(p.plan.variant());
    keys.insert(p.plan.variant().key());
  }
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Conj, UnaryOp::Exp, UnaryOp::Abs, UnaryOp::Real, UnaryOp::Imag}) {
    OpCall c{OpKind::Unary, unary_op_name(op), {z}, {}, {}};
    c.attrs.unary = op;
    const bool real = op == UnaryOp::Abs || op == UnaryOp::Real || op == UnaryOp::Imag;
    c.out_specs = {{{3}, real ? DType::F32 : DType::C64}};
    Planned<ComplexEwPlan> p = plan_complex_ew(caps, c);
    ASSERT_TRUE(p.ok()) << p.reject;
    expect_variant_expands(p.plan.variant());
    keys.insert(p.plan.variant().key());
  }
  EXPECT_EQ(keys.size(), 12u);
  OpCall where{OpKind::Where, "where", {Tensor::empty({3}, DType::Bool), z, z}, {}, {}};
  where.out_specs = {{{3}, DType::C64}};
  expect_variant_expands(plan_complex_ew(caps, where).plan.variant());
  OpCall fill{OpKind::Fill, "full", {}, {}, {}};
  fill.out_specs = {{{3}, DType::C64}};
  expect_variant_expands(plan_complex_ew(caps, fill).plan.variant());
}

TEST(ComplexPlan, ReduceKernelBySize) {
  const Adapter gpu = big_gpu();  // Caps refers to it: it must outlive caps
  const Caps caps = gpu.caps();
  auto red = [](const Shape& s, std::vector<int64_t> axes, ReduceOp op) {
    OpCall c{OpKind::Reduce, reduce_op_name(op), {Tensor::empty({1}, DType::C64).view(Shape(s.size(), 1)).expand(s)}, {}, {}};
    c.attrs.reduce = op;
    c.attrs.axes = std::move(axes);
    c.out_specs = {{{1}, DType::C64}};
    return c;
  };
  const ComplexReducePlan few = plan_complex_reduce(caps, red({1000, 3}, {1}, ReduceOp::Sum)).plan;
  EXPECT_EQ(few.shader.kernel, ComplexReduceKernel::Serial);
  const ComplexReducePlan many = plan_complex_reduce(caps, red({3, 1000}, {1}, ReduceOp::Mean)).plan;
  EXPECT_EQ(many.shader.kernel, ComplexReduceKernel::Workgroup);
  EXPECT_EQ(many.name(), "c64 mean wg");
  expect_variant_expands(few.variant());
  expect_variant_expands(many.variant());
  EXPECT_FALSE(plan_complex_reduce(caps, red({3, 4}, {1}, ReduceOp::Max)).ok());
}

}  // namespace
