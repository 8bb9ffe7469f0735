// Best-first merging of adjacent symbols, the loop both tokenizers share: SentencePiece merges
// the pair whose concatenation is the highest-scoring token, GPT-2 BPE the pair of lowest merge
// rank; both break ties leftmost and stop when no adjacent pair merges. Symbols are byte ranges
// of one string, kept in a linked list so a merge is O(1); the queue holds candidate pairs and
// a popped candidate whose symbols changed since it was queued is skipped (lazy deletion).
#pragma once
#include <cstddef>
#include <optional>
#include <queue>
#include <vector>

namespace wgt::detail {

struct MergeSymbol {
  int prev, next;  // neighbours in the list, -1 at the ends
  size_t off, len;  // byte range in the string; len 0 once merged into its left neighbour
};

// Symbols for the given lengths (one per character), linked in order.
template <class Lengths>
std::vector<MergeSymbol> link_symbols(const Lengths& lens) {
  std::vector<MergeSymbol> sym;
  size_t off = 0;
  for (size_t len : lens) {
    const int idx = static_cast<int>(sym.size());
    sym.push_back({idx - 1, idx + 1, off, len});
    off += len;
  }
  if (!sym.empty()) sym.back().next = -1;
  return sym;
}

// Merges while some adjacent pair has a priority: priority(l, r) is the pair's priority
// (higher merges first), or nullopt when l and r do not merge. Returns nothing: the merged
// symbols are the list from index 0 (see for_each_symbol).
template <class Priority>
void merge_best_first(std::vector<MergeSymbol>& sym, Priority priority) {
  struct Candidate {
    double priority;
    int left, right;
    size_t len;  // left.len + right.len when queued: a mismatch later means the entry is stale
  };
  struct Order {  // priority_queue pops the "largest": highest priority, then leftmost
    bool operator()(const Candidate& a, const Candidate& b) const {
      return a.priority != b.priority ? a.priority < b.priority : a.left > b.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, Order> queue;
  auto try_pair = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    if (const std::optional<double> p = priority(sym[l], sym[r])) queue.push({*p, l, r, sym[l].len + sym[r].len});
  };
  for (int i = 0; i + 1 < static_cast<int>(sym.size()); ++i) try_pair(i, i + 1);
  while (!queue.empty()) {
    const Candidate b = queue.top();
    queue.pop();
    MergeSymbol& l = sym[b.left];
    MergeSymbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.next != b.right || l.len + r.len != b.len) continue;
    l.len += r.len;  // r is absorbed; symbols are contiguous in the string
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_pair(l.prev, b.left);
    try_pair(b.left, l.next);
  }
}

// Calls f(symbol) for each symbol left after merging, in order.
template <class F>
void for_each_symbol(const std::vector<MergeSymbol>& sym, F f) {
  if (sym.empty()) return;
  for (int i = 0; i >= 0; i = sym[i].next) f(sym[i]);
}

}  // namespace wgt::detail
