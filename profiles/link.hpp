// What moving bytes costs: one link's latency and bandwidth, and a ring all-reduce over it. The
// one definition of both, used by the cluster model (planner/timing/cluster.hpp) for pipeline
// transfers and gradient all-reduces, and by the synthesizer (profiles/synthesizer.hpp) for the
// tensor-parallel collectives inside a layer.
#pragma once

#include <cstdint>

#include "core/units.hpp"

namespace recycle::profiles {

struct Link {
  BytesPerSecond bandwidth = 0;  ///< <= 0: infinite
  Nanos latency = 0;

  /// latency + bytes / bandwidth, rounded to the nanosecond.
  [[nodiscard]] Nanos transfer_time(Bytes bytes) const noexcept;
};

/// 2(n-1)/n * bytes / bandwidth + 2(n-1) * latency; 0 for n <= 1.
[[nodiscard]] Nanos ring_all_reduce_time(std::int32_t peers, Bytes bytes,
                                         const Link& link) noexcept;

}  // namespace recycle::profiles
