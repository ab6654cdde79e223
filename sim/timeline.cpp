#include "sim/timeline.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace recycle::sim {

Timeline::Position Timeline::locate(std::size_t record) const noexcept {
  const auto it = std::upper_bound(first_record.begin(), first_record.end(), record);
  const auto w = static_cast<std::size_t>(it - first_record.begin()) - 1;
  const std::size_t offset = record - first_record[w];
  const std::size_t n = list_size(w);
  return {w, static_cast<std::int32_t>(offset / n), offset % n};
}

void check_record_count(std::size_t actions, std::size_t transfers) {
  if (std::max(actions, transfers) >
      static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw InputError("--iterations", "too many actions to simulate (" + std::to_string(actions) +
                                         " over all iterations); simulate fewer iterations");
  }
}

}  // namespace recycle::sim
