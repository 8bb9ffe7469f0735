// Deterministic generators of CSR matrices (see generate.hpp).
#include "sparse/generate.hpp"

#include <algorithm>

#include "sparse/csr_host.hpp"
#include "wgt/ops.hpp"

namespace wgt::sparse_gen {

namespace {

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64: fixed streams, no library dependence
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  float value() { return static_cast<float>(unit() * 2.0 - 1.0); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

// Appends row entries (sorted, deduplicated) with random values.
void push_row(HostCsr& h, std::vector<int64_t>& cols, Rng& rng) {
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  for (int64_t c : cols) {
    h.indices.push_back(c);
    h.values.push_back(rng.value());
  }
  h.indptr.push_back(static_cast<int64_t>(h.indices.size()));
}

HostCsr start(int64_t rows, int64_t cols) {
  HostCsr h;
  h.rows = rows;
  h.cols = cols;
  h.indptr.reserve(static_cast<size_t>(rows) + 1);
  h.indptr.push_back(0);
  return h;
}

}  // namespace

HostCsr empty_rows(int64_t rows, int64_t cols) {
  HostCsr h = start(rows, cols);
  h.indptr.assign(static_cast<size_t>(rows) + 1, 0);
  return h;
}

HostCsr diagonal(int64_t n, uint64_t seed) { return banded(n, 0, seed); }

HostCsr banded(int64_t n, int64_t hw, uint64_t seed) {
  HostCsr h = start(n, n);
  Rng rng{seed};
  std::vector<int64_t> cols;
  for (int64_t r = 0; r < n; ++r) {
    cols.clear();
    for (int64_t c = std::max<int64_t>(0, r - hw); c <= std::min(n - 1, r + hw); ++c) cols.push_back(c);
    push_row(h, cols, rng);
  }
  return h;
}

HostCsr laplacian_2d(int64_t side) {
  const int64_t n = side * side;
  HostCsr h = start(n, n);
  h.indices.reserve(static_cast<size_t>(n) * 5);
  h.values.reserve(static_cast<size_t>(n) * 5);
  for (int64_t i = 0; i < side; ++i)
    for (int64_t j = 0; j < side; ++j) {
      const int64_t r = i * side + j;
      auto put = [&](int64_t c, float v) { h.indices.push_back(c); h.values.push_back(v); };
      if (i > 0) put(r - side, -1.0f);
      if (j > 0) put(r - 1, -1.0f);
      put(r, 4.0f);
      if (j + 1 < side) put(r + 1, -1.0f);
      if (i + 1 < side) put(r + side, -1.0f);
      h.indptr.push_back(static_cast<int64_t>(h.indices.size()));
    }
  return h;
}

HostCsr uniform(int64_t rows, int64_t cols, int64_t per_row, uint64_t seed) {
  return mixed(rows, cols, per_row, 0.0, -1, seed);
}

HostCsr mixed(int64_t rows, int64_t cols, int64_t per_row, double p_empty, int64_t dense_row, uint64_t seed) {
  HostCsr h = start(rows, cols);
  Rng rng{seed};
  std::vector<int64_t> c;
  for (int64_t r = 0; r < rows; ++r) {
    c.clear();
    if (r == dense_row) {
      for (int64_t j = 0; j < cols; ++j) c.push_back(j);
    } else if (cols > 0 && !(p_empty > 0 && rng.unit() < p_empty)) {
      // Distinct columns: redraw collisions (per_row is far below cols in every use).
      while (static_cast<int64_t>(c.size()) < std::min(per_row, cols)) {
        const int64_t j = rng.below(cols);
        if (std::find(c.begin(), c.end(), j) == c.end()) c.push_back(j);
      }
    }
    push_row(h, c, rng);
  }
  return h;
}

HostCsr rmat(int scale, int64_t avg_degree, uint64_t seed) {
  const int64_t n = int64_t{1} << scale, m = n * avg_degree;
  Rng rng{seed};
  std::vector<int64_t> src(static_cast<size_t>(m)), dst(static_cast<size_t>(m));
  std::vector<int64_t> count(static_cast<size_t>(n) + 1, 0);
  for (int64_t e = 0; e < m; ++e) {
    int64_t r = 0, c = 0;
    for (int bit = 0; bit < scale; ++bit) {
      const double u = rng.unit();
      const int q = u < 0.57 ? 0 : u < 0.76 ? 1 : u < 0.95 ? 2 : 3;
      r = (r << 1) | (q >> 1);
      c = (c << 1) | (q & 1);
    }
    src[e] = r;
    dst[e] = c;
    ++count[static_cast<size_t>(r) + 1];
  }
  for (int64_t i = 0; i < n; ++i) count[i + 1] += count[i];
  std::vector<int64_t> bucket(static_cast<size_t>(m)), at(count.begin(), count.end() - 1);
  for (int64_t e = 0; e < m; ++e) bucket[at[src[e]]++] = dst[e];
  HostCsr h = start(n, n);
  h.indices.reserve(static_cast<size_t>(m));
  h.values.reserve(static_cast<size_t>(m));
  std::vector<int64_t> c;
  for (int64_t r = 0; r < n; ++r) {
    c.assign(bucket.begin() + count[r], bucket.begin() + count[r + 1]);
    push_row(h, c, rng);
  }
  return h;
}

CsrTensor to_csr(const HostCsr& h, DType index, DType values) {
  Tensor v = Tensor::from_vector(h.values, {static_cast<int64_t>(h.values.size())});
  if (values != DType::F32) v = cast(v, values);
  return CsrTensor::from_parts(sparse_detail::index_tensor(h.indptr, index, Device::cpu()),
                               sparse_detail::index_tensor(h.indices, index, Device::cpu()), v, {h.rows, h.cols});
}

}  // namespace wgt::sparse_gen
