#include "core/json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace recycle {

namespace {

std::string line_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

const char* type_name(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

/// Builds the document as nlohmann's own SAX parser does and refuses an object that gives one key
/// twice (RFC 8259 leaves which one counts to the reader; the last would silently win), naming the
/// key's path, while the parser walks the text. A SAX handler, not a parse callback: the callback
/// parser looks through an array's elements each time one of its objects ends, which is quadratic
/// in the length of an array of objects (a schedule's `failed` or `workers`).
class CheckedDocument {
 public:
  using json = nlohmann::json;
  CheckedDocument(json& root, const std::string& source) : dom_(root, true), source_(source) {}

  bool null() {
    enter_element();
    return dom_.null();
  }
  bool boolean(bool value) {
    enter_element();
    return dom_.boolean(value);
  }
  bool number_integer(json::number_integer_t value) {
    enter_element();
    return dom_.number_integer(value);
  }
  bool number_unsigned(json::number_unsigned_t value) {
    enter_element();
    return dom_.number_unsigned(value);
  }
  bool number_float(json::number_float_t value, const json::string_t& text) {
    enter_element();
    return dom_.number_float(value, text);
  }
  bool string(json::string_t& value) {
    enter_element();
    return dom_.string(value);
  }
  bool binary(json::binary_t& value) {
    enter_element();
    return dom_.binary(value);
  }
  bool start_object(std::size_t elements) {
    enter_element();
    frames_.push_back({true, {}, {}, 0, 0});
    return dom_.start_object(elements);
  }
  bool key(json::string_t& key) {
    Frame& object = frames_.back();
    object.key = key;
    if (!object.keys.insert(object.key).second) {
      throw InputError(source_ + ": " + path(),
                       "duplicate key (the object gives it twice; keep one)");
    }
    return dom_.key(key);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t elements) {
    enter_element();
    frames_.push_back({false, {}, {}, 0, 0});
    return dom_.start_array(elements);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);  // throws it
  }

 private:
  struct Frame {
    bool object = false;
    std::unordered_set<std::string> keys;
    std::string key;           ///< object: the member being read
    std::size_t index = 0;     ///< array: the element being read
    std::size_t elements = 0;  ///< array: elements begun
  };

  /// An element begins: in an array, it is the next one.
  void enter_element() {
    if (!frames_.empty() && !frames_.back().object)
      frames_.back().index = frames_.back().elements++;
  }

  /// "workers[3].dp": the member or element each open object or array is reading.
  [[nodiscard]] std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.object) {
        if (!out.empty()) out += '.';
        out += f.key;
      } else {
        out += '[' + std::to_string(f.index) + ']';
      }
    }
    return out;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& source_;
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& source) {
  try {
    nlohmann::json root;
    CheckedDocument document(root, source);
    nlohmann::json::sax_parse(text, &document);
    return root;
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points one past the offending character.
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    const std::string problem = text.empty() ? "empty file, expected JSON" : "malformed JSON";
    throw InputError(source + ":" + line_column(text, byte), problem);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number past double's range (406: "number overflow parsing '1e999'"): no position is
    // given, so point at the first occurrence of the number's text.
    const std::string what = e.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::string number =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const std::size_t at = number.empty() ? std::string::npos : text.find(number);
    const std::string where =
        at == std::string::npos ? source : source + ":" + line_column(text, at);
    throw InputError(where, number.empty() ? std::string("a number out of range")
                                           : "number '" + number + "' is out of range");
  }
}

nlohmann::json load_json(const std::string& path) {
  return parse_json(read_text_file(path), path);
}

std::string JsonView::where() const {
  return path_.empty() ? source_ : source_ + ": " + path_;
}

void JsonView::fail(const std::string& problem) const {
  throw InputError(where(), problem);
}

JsonView JsonView::at(std::string_view key) const {
  if (!node_->is_object()) fail(std::string("expected an object, got ") + type_name(*node_));
  const auto it = node_->find(key);
  const std::string child = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (it == node_->end()) throw InputError(source_ + ": " + child, "missing field");
  return JsonView(*it, source_, child);
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return at(key);
}

bool JsonView::has(std::string_view key) const {
  return node_->is_object() && node_->find(key) != node_->end();
}

void JsonView::only_keys(std::initializer_list<std::string_view> keys) const {
  if (!node_->is_object()) fail(std::string("expected an object, got ") + type_name(*node_));
  for (const auto& [key, value] : node_->items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string known;
    for (const std::string_view k : keys) known += (known.empty() ? "" : ", ") + std::string(k);
    const std::string child = path_.empty() ? key : path_ + "." + key;
    throw InputError(source_ + ": " + child, "unknown key (known: " + known + ")");
  }
}

std::vector<JsonView> JsonView::items() const {
  if (!node_->is_array()) fail(std::string("expected an array, got ") + type_name(*node_));
  std::vector<JsonView> out;
  out.reserve(node_->size());
  for (std::size_t i = 0; i < node_->size(); ++i) {
    out.emplace_back((*node_)[i], source_, path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::int64_t JsonView::as_int(std::int64_t min, std::int64_t max) const {
  std::int64_t value = 0;
  if (node_->is_number_integer()) {
    // nlohmann keeps non-negative integers unsigned; only those above INT64_MAX do not fit.
    if (node_->is_number_unsigned() &&
        node_->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
           "], got " + node_->dump());
    }
    value = node_->get<std::int64_t>();
  } else if (node_->is_number_float()) {
    const double d = node_->get<double>();
    if (d != std::floor(d) || std::fabs(d) > 9e15)
      fail("expected an integer, got " + node_->dump());
    value = static_cast<std::int64_t>(d);
  } else {
    fail(std::string("expected an integer, got ") + type_name(*node_));
  }
  if (value < min || value > max) {
    fail("expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
         std::to_string(value));
  }
  return value;
}

double JsonView::as_double() const {
  if (!node_->is_number()) fail(std::string("expected a number, got ") + type_name(*node_));
  const double d = node_->get<double>();
  if (!std::isfinite(d)) fail("expected a finite number");
  return d;
}

double JsonView::as_nonnegative() const {
  const double d = as_double();
  if (d < 0) fail("expected a number >= 0, got " + node_->dump());
  return d;
}

std::string JsonView::as_string() const {
  if (!node_->is_string()) fail(std::string("expected a string, got ") + type_name(*node_));
  return node_->get<std::string>();
}

std::size_t JsonView::as_choice(std::initializer_list<std::string_view> choices) const {
  const std::string got = as_string();
  std::string expected;
  std::size_t i = 0;
  for (const std::string_view choice : choices) {
    if (got == choice) return i;
    const bool last = ++i == choices.size();
    expected += (i == 1 ? "" : last ? " or " : ", ") + ("\"" + std::string(choice) + "\"");
  }
  fail("expected " + expected + ", got \"" + shown(got) + "\"");
}

void JsonView::check_format(std::string_view format) const {
  (void)as_choice({format});
}

bool JsonView::as_bool() const {
  if (!node_->is_boolean()) fail(std::string("expected true or false, got ") + type_name(*node_));
  return node_->get<bool>();
}

}  // namespace recycle
