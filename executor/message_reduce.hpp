// The all-reduce of a run whose ranks live in several processes: the arithmetic of
// AllReduceGroup (executor/channels.hpp) carried by messages instead of shared slots. Rank r
// sends shard s of its vector to rank s, sums the shards it receives for shard r in rank order
// (reduce_shard's order, so the result is bit for bit the one-process result), and sends the sum
// to every other rank, which copies it in (gather_shards). Each rank moves 2 (n - 1) / n of the
// vector, as a ring all-reduce does. Messages arrive in the ranks' own mailboxes, keyed so that
// they never meet the schedule's activations and gradients, and every wait gives up as the
// mailbox's do (abort, time limit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "executor/channels.hpp"

namespace recycle::executor {

class MessageReduce {
 public:
  /// Hands `data` to member `to` (an index into the members given below) under `key`.
  using Post = std::function<void(std::size_t to, const MessageKey& key, std::vector<float> data)>;
  /// The mailbox of member `rank`, as seen by that member's own thread.
  using Inbox = std::function<Mailbox<>&(std::size_t rank)>;

  static constexpr std::int32_t kScatter = 2;  ///< message kind: a shard to sum
  static constexpr std::int32_t kGather = 3;   ///< message kind: a summed shard

  /// `ranks` members; `group` tells this group's messages from other groups' (a virtual stage,
  /// or -1 for the optimizer barrier).
  MessageReduce(std::size_t ranks, std::int32_t group, Post post, Inbox inbox)
      : ranks_(ranks), group_(group), post_(std::move(post)), inbox_(std::move(inbox)) {}

  /// Member `rank`'s part of round `round` (rounds are numbered by the caller, one per call on
  /// every member: the iteration). Every member's `data` has the same size.
  void all_reduce(std::size_t rank, std::vector<float>& data, std::int64_t round,
                  const std::string& what) const {
    if (ranks_ == 1) return;
    const auto me = static_cast<std::int32_t>(rank);
    for (std::size_t s = 0; s < ranks_; ++s) {
      if (s == rank) continue;
      const auto [begin, end] = shard_of(data.size(), ranks_, s);
      post_(s, {kScatter, group_, me, 0, round}, slice(data, begin, end));
    }
    Mailbox<>& mine = inbox_(rank);
    const auto [begin, end] = shard_of(data.size(), ranks_, rank);
    std::vector<std::vector<float>> shards(ranks_);
    for (std::size_t s = 0; s < ranks_; ++s) {
      shards[s] =
          s == rank
              ? slice(data, begin, end)
              : checked(mine.take({kScatter, group_, static_cast<std::int32_t>(s), 0, round}, what),
                        end - begin, what);
    }
    for (std::size_t i = 0; i < end - begin; ++i) {
      float sum = shards.front()[i];
      for (std::size_t s = 1; s < ranks_; ++s) sum += shards[s][i];
      data[begin + i] = sum;
    }
    for (std::size_t s = 0; s < ranks_; ++s) {
      if (s != rank) post_(s, {kGather, group_, me, 0, round}, slice(data, begin, end));
    }
    for (std::size_t s = 0; s < ranks_; ++s) {
      if (s == rank) continue;
      const auto [from, to] = shard_of(data.size(), ranks_, s);
      const std::vector<float> summed =
          checked(mine.take({kGather, group_, static_cast<std::int32_t>(s), 0, round}, what),
                  to - from, what);
      std::copy(summed.begin(), summed.end(), data.begin() + static_cast<std::ptrdiff_t>(from));
    }
  }

 private:
  static std::vector<float> slice(const std::vector<float>& data, std::size_t begin,
                                  std::size_t end) {
    return {data.begin() + static_cast<std::ptrdiff_t>(begin),
            data.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  static std::vector<float> checked(std::vector<float> shard, std::size_t size,
                                    const std::string& what) {
    if (shard.size() != size)
      throw std::runtime_error(what + ": the ranks' vectors differ in size");
    return shard;
  }

  std::size_t ranks_;
  std::int32_t group_;
  Post post_;
  Inbox inbox_;
};

}  // namespace recycle::executor
