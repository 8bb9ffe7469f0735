// The README's hello world: a tiny program on WebGPU when available, else on the CPU.
#include <cstdio>

#include "wgt/wgt.hpp"

int main() {
  using namespace wgt;
  Device dev = webgpu_available() ? Device::webgpu(0) : Device::cpu();
  Tensor x = rand_normal({4, 8}, /*seed=*/1).to(dev);  // explicit upload
  Tensor w = rand_normal({16, 8}, /*seed=*/2).to(dev);
  Tensor y = softmax(matmul_t(rms_norm(x), w), -1);    // runs where x and w live
  std::printf("%s ran on %s\n", y.str().c_str(), Runtime::get().last_decision().backend.c_str());
  Tensor rows = sum(y, {-1}).cpu();                    // explicit download
  for (float v : rows.to_vector<float>()) std::printf("%.4f ", v);  // each row sums to 1
  std::printf("\n");
  return 0;
}
