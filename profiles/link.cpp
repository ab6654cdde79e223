#include "profiles/link.hpp"

namespace recycle::profiles {

Nanos Link::transfer_time(Bytes bytes) const noexcept {
  const Nanos wire = bandwidth > 0 ? to_nanos(static_cast<double>(bytes) / bandwidth) : 0;
  return latency + wire;
}

Nanos ring_all_reduce_time(std::int32_t peers, Bytes bytes, const Link& link) noexcept {
  if (peers <= 1) return 0;
  const double n = peers;
  const Nanos wire = link.bandwidth > 0
                         ? to_nanos(2.0 * (n - 1) / n * static_cast<double>(bytes) / link.bandwidth)
                         : 0;
  return wire + 2 * static_cast<Nanos>(peers - 1) * link.latency;
}

}  // namespace recycle::profiles
