// Partition of a CSR matrix's rows into the Adaptive SpMV schedule's blocks (row_blocks.hpp).
#include "sparse/row_blocks.hpp"

#include <algorithm>

namespace wgt::sparse_detail {

int64_t block_lanes(int64_t rows) {
  int64_t lanes = kBlockRows;
  while (lanes > 1 && lanes * rows > kBlockRows) lanes /= 2;
  return lanes;
}

RowBlocks partition_row_blocks(const std::vector<int64_t>& ip, int64_t lane_entries) {
  lane_entries = std::max<int64_t>(1, lane_entries);
  RowBlocks out;
  const int64_t rows = static_cast<int64_t>(ip.size()) - 1;
  auto push = [&](int64_t row, int64_t k, bool split) {
    out.pairs.push_back(static_cast<int32_t>(row));
    out.pairs.push_back(static_cast<int32_t>(static_cast<uint32_t>(k) | (split ? kSplitFlag : 0u)));
  };
  int64_t r = 0;
  while (r < rows) {
    const int64_t len = ip[r + 1] - ip[r];
    if (len > kBlockEntries) {
      // Chunks of kBlockEntries entries (the last one shorter), each a workgroup's.
      for (int64_t k = ip[r]; k < ip[r + 1]; k += kBlockEntries) push(r, k, true);
      ++out.split_rows;
      ++r;
      continue;
    }
    // A stream block from r: add rows while the entries fit the staging, the rows the
    // workgroup, and the longest row its lanes' serial share (a row alone always makes a
    // block: its kBlockRows lanes share at most kBlockEntries entries).
    const int64_t start = r;
    int64_t longest = 0;
    while (r < rows && r - start < kBlockRows) {
      const int64_t l = ip[r + 1] - ip[r];
      if (l > kBlockEntries) break;
      const int64_t n = r - start + 1, m = std::max(longest, l);
      if (n > 1 && (ip[r + 1] - ip[start] > kBlockEntries || m > lane_entries * block_lanes(n))) break;
      longest = m;
      ++r;
    }
    push(start, ip[start], false);
  }
  out.blocks = static_cast<int64_t>(out.pairs.size() / 2);
  push(rows, ip[rows], false);
  return out;
}

}  // namespace wgt::sparse_detail
