#include "planner/language/torch_dialect.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace recycle::planner {

namespace {

/// The tokens that only pace torch's runtime, and whether each carries a micro-batch.
struct Pacing {
  std::string_view name;
  bool microbatch;
};
constexpr std::array<Pacing, 5> kPacing = {{
    {"WAIT_REDUCE_GRAD", false},
    {"WAIT_SEND_F", true},
    {"WAIT_SEND_B", true},
    {"UNSHARD", false},
    {"RESHARD", false},
}};
constexpr std::string_view kOverlap = "OVERLAP_F_B";

bool parse_count(std::string_view text, std::int32_t& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

/// One plain token (no OVERLAP_F_B) into `cell`; false if it is not one.
bool read_plain(std::string_view token, TorchCell& cell) {
  if (const std::optional<Action> action = parse_token(token, 0)) {
    cell.actions.push_back(*action);
    cell.virtual_stages.push_back(action->virtual_stage);
    return true;
  }
  std::size_t digits = 0;
  while (digits < token.size() && token[digits] >= '0' && token[digits] <= '9') ++digits;
  std::int32_t virtual_stage = 0;
  if (!parse_count(token.substr(0, digits), virtual_stage)) return false;
  const std::string_view rest = token.substr(digits);
  for (const Pacing& p : kPacing) {
    if (rest.substr(0, p.name.size()) != p.name) continue;
    const std::string_view tail = rest.substr(p.name.size());
    std::int32_t microbatch = 0;
    if (p.microbatch ? !parse_count(tail, microbatch) : !tail.empty()) return false;
    cell.virtual_stages.push_back(virtual_stage);
    return true;
  }
  return false;
}

std::string token_of(std::int32_t virtual_stage, std::string_view type) {
  return std::to_string(virtual_stage) + std::string(type);
}

}  // namespace

const std::vector<std::string>& torch_version_names() {
  static const std::vector<std::string> names = {"2.8", "2.15"};
  return names;
}

std::optional<TorchVersion> parse_torch_version(std::string_view name) {
  if (name == "2.8") return TorchVersion::k2_8;
  if (name == "2.15") return TorchVersion::k2_15;
  return std::nullopt;
}

std::vector<std::string> torch_comms_row(const std::vector<Action>& actions,
                                         std::int32_t microbatches, TorchVersion version) {
  std::vector<std::string> row;
  row.reserve(actions.size() * 2);
  if (version == TorchVersion::k2_8) {
    for (const Action& a : actions)
      if (!is_per_iteration(a.type)) row.push_back(to_token(a, 0));
    return row;
  }
  std::map<std::int32_t, std::int32_t> backwards;  // W or B seen, per virtual stage
  std::vector<std::int32_t> reduce_due;            // stages whose last backward has run
  using SendKey = std::tuple<ActionType, std::int32_t, std::int32_t>;
  std::map<SendKey, std::size_t> pending;  // a send not yet waited for -> its order
  std::size_t sends = 0;
  const auto flush_reduce = [&] {
    for (const std::int32_t v : reduce_due) {
      row.push_back(token_of(v, "REDUCE_GRAD"));
      row.push_back(token_of(v, "WAIT_REDUCE_GRAD"));
    }
    reduce_due.clear();
  };
  for (const Action& a : actions) {
    if (is_per_iteration(a.type)) continue;
    if (is_compute(a.type)) flush_reduce();
    row.push_back(to_token(a, 0));
    if (a.type == ActionType::kSendF || a.type == ActionType::kSendB)
      pending.emplace(SendKey{a.type, a.virtual_stage, a.microbatch}, sends++);
    if (a.type == ActionType::kBackwardInput || a.type == ActionType::kBackward) {
      const auto found = pending.find({ActionType::kSendF, a.virtual_stage, a.microbatch});
      if (found != pending.end()) {
        row.push_back(token_of(a.virtual_stage, "WAIT_SEND_F") + std::to_string(a.microbatch));
        pending.erase(found);
      }
    }
    if ((a.type == ActionType::kBackwardWeight || a.type == ActionType::kBackward) &&
        ++backwards[a.virtual_stage] == microbatches) {
      reduce_due.push_back(a.virtual_stage);
    }
  }
  flush_reduce();
  std::vector<std::pair<std::size_t, SendKey>> rest;
  for (const auto& [key, order] : pending) rest.emplace_back(order, key);
  std::sort(rest.begin(), rest.end());
  for (const auto& [order, key] : rest) {
    const auto& [type, v, mb] = key;
    row.push_back(token_of(v, type == ActionType::kSendF ? "WAIT_SEND_F" : "WAIT_SEND_B") +
                  std::to_string(mb));
  }
  return row;
}

std::optional<TorchCell> parse_torch_cell(std::string_view cell) {
  TorchCell out;
  if (!cell.empty() && cell.front() == '(') {
    const auto close = cell.find(')');
    if (close == std::string_view::npos || cell.substr(close + 1) != kOverlap) return std::nullopt;
    for (const std::string_view part : split(cell.substr(1, close - 1), ';')) {
      const std::string_view sub = trim(part);
      if (sub.empty()) continue;
      if (!read_plain(sub, out)) return std::nullopt;
    }
    return out;
  }
  if (!read_plain(cell, out)) return std::nullopt;
  return out;
}

}  // namespace recycle::planner
