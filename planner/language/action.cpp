#include "planner/language/action.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "core/error.hpp"

namespace recycle::planner {

namespace {

constexpr std::array<std::pair<ActionType, std::string_view>, 10> kNames = {{
    {ActionType::kSendF, "SEND_F"},
    {ActionType::kRecvF, "RECV_F"},
    {ActionType::kSendB, "SEND_B"},
    {ActionType::kRecvB, "RECV_B"},
    {ActionType::kReduceGrad, "REDUCE_GRAD"},
    {ActionType::kOptimizer, "OPT"},
    {ActionType::kForward, "F"},
    {ActionType::kBackwardInput, "I"},
    {ActionType::kBackwardWeight, "W"},
    {ActionType::kBackward, "B"},
}};

bool parse_nonnegative(std::string_view text, std::int32_t& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

}  // namespace

std::string_view type_name(ActionType type) noexcept {
  for (const auto& [t, name] : kNames) {
    if (t == type) return name;
  }
  return "?";
}

std::string to_token(const Action& action, std::int32_t worker_dp) {
  std::string token = std::to_string(action.virtual_stage);
  token += type_name(action.type);
  if (!is_per_iteration(action.type)) {
    token += std::to_string(action.microbatch);
    RECYCLE_ASSERT(action.owner >= 0, "an action without an owner");
    if (action.owner != worker_dp) {
      token += '@';
      token += std::to_string(action.owner);
    }
  }
  if (action.lag == 1) token += '\'';
  return token;
}

std::optional<Action> parse_token(std::string_view token, std::int32_t worker_dp) {
  std::size_t digits = 0;
  while (digits < token.size() && token[digits] >= '0' && token[digits] <= '9') ++digits;
  Action action;
  if (!parse_nonnegative(token.substr(0, digits), action.virtual_stage)) return std::nullopt;
  std::string_view rest = token.substr(digits);
  bool matched = false;
  for (const auto& [type, name] : kNames) {  // longest names first, so "SEND_F" is not read as "S"
    if (rest.substr(0, name.size()) == name) {
      action.type = type;
      rest.remove_prefix(name.size());
      matched = true;
      break;
    }
  }
  if (!matched) return std::nullopt;
  action.owner = worker_dp;
  if (!rest.empty() && rest.back() == '\'') {
    action.lag = 1;
    rest.remove_suffix(1);
  }
  if (is_per_iteration(action.type)) {
    if (!rest.empty()) return std::nullopt;
    action.microbatch = -1;
    return action;
  }
  const auto at = rest.find('@');
  if (!parse_nonnegative(rest.substr(0, at), action.microbatch)) return std::nullopt;
  if (at != std::string_view::npos && !parse_nonnegative(rest.substr(at + 1), action.owner)) {
    return std::nullopt;
  }
  return action;
}

}  // namespace recycle::planner
