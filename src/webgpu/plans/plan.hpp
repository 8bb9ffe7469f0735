// Shared pieces of the typed kernel plans (src/webgpu/plans/<family>_plan.hpp): a family's
// plan() is a pure function of the adapter's capabilities, the tuning and the op call that
// returns a small typed Plan or the reason the family cannot run the call (that reason is what
// the backend's supports() answers); the launcher's encode() reads the plan and nothing else.
// No Dawn call here, so plans are unit-tested without a GPU.
#pragma once
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "webgpu/context.hpp"

namespace wgt::webgpu {

// What a plan may depend on from the adapter.
struct Caps {
  const Features& features;
  const Limits& limits;
  static Caps of(const Context& ctx) { return {ctx.features(), ctx.limits()}; }
};

// A plan, or the reason the family rejects the call (plan() never rejects silently: a bad
// tuning value is a thrown InvalidArgument / Unsupported, not a reject).
template <class P>
struct Planned {
  P plan{};
  std::string reject;  // empty: `plan` is valid
  bool ok() const { return reject.empty(); }
  static Planned no(std::string why) { return {P{}, std::move(why)}; }
};

// The pipeline key of a plan's shader-selecting fields: their bytes, so the key is exact (no
// hand packing, no collisions). T must have no padding, so equal bytes mean equal fields.
template <class T>
PipelineKey make_key(const void* family, const T& fields) {
  static_assert(std::is_trivially_copyable_v<T> && std::has_unique_object_representations_v<T>,
                "pipeline fields must be trivially copyable without padding");
  static_assert(sizeof(T) <= sizeof(PipelineKey::w), "pipeline fields larger than a PipelineKey");
  PipelineKey k;
  k.family = family;
  std::memcpy(k.w.data(), &fields, sizeof(T));
  return k;
}

}  // namespace wgt::webgpu
