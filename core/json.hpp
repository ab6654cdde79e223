// Reading JSON input. `load_json` parses a file and reports syntax errors as `file:line:column`;
// a JsonView walks the parsed tree remembering the path it took ("workers[3].actions[2]"), so
// every wrong type, missing field or out-of-range value becomes an InputError that names the file
// and the field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace recycle {

/// Parses JSON text; `source` names it in errors (a file path).
[[nodiscard]] nlohmann::json parse_json(const std::string& text, const std::string& source);
[[nodiscard]] nlohmann::json load_json(const std::string& path);

class JsonView {
 public:
  JsonView(const nlohmann::json& node, std::string source, std::string path = {})
      : node_(&node), source_(std::move(source)), path_(std::move(path)) {}

  /// A required member of an object.
  [[nodiscard]] JsonView at(std::string_view key) const;
  /// An optional member of an object.
  [[nodiscard]] std::optional<JsonView> find(std::string_view key) const;
  [[nodiscard]] bool has(std::string_view key) const;
  /// InputError naming the first member of this object whose key is not in `keys` (a typo must
  /// not be silently ignored), listing the keys it knows.
  void only_keys(std::initializer_list<std::string_view> keys) const;
  /// The elements of an array.
  [[nodiscard]] std::vector<JsonView> items() const;

  [[nodiscard]] std::int64_t as_int(std::int64_t min, std::int64_t max) const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] double as_nonnegative() const;
  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] bool as_bool() const;
  /// The index in `choices` of this string; InputError `expected "a", "b" or "c", got "x"`.
  [[nodiscard]] std::size_t as_choice(std::initializer_list<std::string_view> choices) const;
  /// InputError `expected "FORMAT", got "x"` unless this string is `format`.
  void check_format(std::string_view format) const;

  [[nodiscard]] const nlohmann::json& raw() const noexcept { return *node_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] std::string where() const;

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  const nlohmann::json* node_;
  std::string source_;
  std::string path_;
};

}  // namespace recycle
