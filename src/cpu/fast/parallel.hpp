// A small persistent thread pool and parallel_for for the fast CPU kernels.
//
// Threading policy (why it looks like this):
// - One process-wide pool of N-1 workers plus the calling thread, N from
//   std::thread::hardware_concurrency(), overridden by env WGT_NUM_THREADS (>= 1).
// - GEMM is left to OpenBLAS and its own threads: our kernels never call BLAS from inside a
//   parallel_for, so the two pools are never busy at the same time. At start-up we set
//   OpenBLAS to the same N (unless OPENBLAS_NUM_THREADS is set and WGT_NUM_THREADS is not),
//   so WGT_NUM_THREADS=1 really means one core for everything.
// - A parallel_for issued from inside a worker (nested) or while another thread owns the
//   pool runs serially on the caller: no deadlock, no oversubscription.
#pragma once
#include <cstdint>
#include <functional>

namespace wgt::cpu_fast {

// Number of threads parallel_for may use (workers + caller), >= 1.
int num_threads();

// Calls fn(b, e) on disjoint sub-ranges covering [begin, end). Sub-ranges hold at least
// `grain` indices (except possibly the last); ranges of at most `grain` run inline on the
// caller. fn must not throw (exceptions are captured and rethrown on the caller anyway).
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);

}  // namespace wgt::cpu_fast
