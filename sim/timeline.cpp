#include "sim/timeline.hpp"

#include <algorithm>

namespace recycle::sim {

Timeline::Position Timeline::locate(std::size_t record) const noexcept {
  const auto it = std::upper_bound(first_record.begin(), first_record.end(), record);
  const auto w = static_cast<std::size_t>(it - first_record.begin()) - 1;
  const std::size_t offset = record - first_record[w];
  const std::size_t n = list_size(w);
  return {w, static_cast<std::int32_t>(offset / n), offset % n};
}

}  // namespace recycle::sim
