// ReCycle planner results for one job model, shared by the replays of that model on several
// traces (configure's seeds and spares counts, sim/replay/configure_failures.hpp): a failure set's
// plan, its ceiling and its bound depend on the model and the set alone, so a set that recurs on
// another seed's trace is planned once. Only those pure results are shared; what a replay
// charges, and the state that depends on the order it meets the sets in (ReplayRates::outrun),
// stay its own, so each replay gives the same result as on its own, on any number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "core/units.hpp"

namespace recycle::sim {

class SharedPlans {
 public:
  /// The planner's result of kind `what` for the failure set `key` (ReplayRates' canonical key):
  /// the one made before, by this replay or another, else `make()`'s, kept. `make` runs outside
  /// the lock; two replays that ask at once both make it, and the first kept is the one both get.
  template <typename Make>
  std::optional<Nanos> get(char what, std::int64_t work, const std::string& key, const Make& make) {
    const auto k = std::make_tuple(what, work, key);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (const auto it = known_.find(k); it != known_.end()) return it->second;
    }
    const std::optional<Nanos> made = make();
    const std::lock_guard<std::mutex> lock(mutex_);
    return known_.try_emplace(k, made).first->second;
  }

  /// Sets kept so far.
  [[nodiscard]] std::size_t size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return known_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::tuple<char, std::int64_t, std::string>, std::optional<Nanos>> known_;
};

}  // namespace recycle::sim
