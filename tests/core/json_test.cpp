#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/json.hpp"

using recycle::InputError;
using recycle::JsonView;

namespace {
std::string error_of(const auto& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("parse_json reports the line and column of a syntax error") {
  // The missing value after "pp": is on line 2; the parser stops at the '}' in column 9.
  const std::string text = "{\"layout\":\n {\"pp\": }\n}";
  CHECK(error_of([&] { (void)recycle::parse_json(text, "s.json"); }) ==
        "s.json:2:9: malformed JSON");
  CHECK(error_of([&] { (void)recycle::parse_json("", "e.json"); }) ==
        "e.json:1:1: empty file, expected JSON");
}

TEST_CASE("parse_json refuses an object that gives a key twice, naming its path") {
  CHECK(error_of([] { (void)recycle::parse_json(R"({"pp": 2, "pp": 4})", "j.json"); }) ==
        "j.json: pp: duplicate key (the object gives it twice; keep one)");
  // Nested: the second "d" of the object that is element 1 of b.c; the arrays before it (element
  // 0 of "x", the scalar 1) are counted.
  CHECK(error_of([] {
          (void)recycle::parse_json(
              R"({"x": [[0], 1], "b": {"c": [[], {"d": 2, "e": [], "d": 3}]}})", "n.json");
        }) == "n.json: b.c[1].d: duplicate key (the object gives it twice; keep one)");
  // The same key in two objects, or as a value, is not a duplicate.
  const auto j = recycle::parse_json(R"([{"a": 1}, {"a": 2, "b": "a"}])", "ok.json");
  CHECK(j[1]["a"] == 2);
}

TEST_CASE("JsonView names the field path in every error") {
  const auto j = recycle::parse_json(
      R"({"layout": {"pp": 0, "dp": "x"}, "workers": [1, {"a": 2}]})", "f.json");
  const JsonView root(j, "f.json");
  CHECK(root.at("layout").at("pp").as_int(0, 10) == 0);
  CHECK(error_of([&] { (void)root.at("layout").at("pp").as_int(1, 10); }) ==
        "f.json: layout.pp: expected an integer in [1, 10], got 0");
  CHECK(error_of([&] { (void)root.at("layout").at("dp").as_int(1, 10); }) ==
        "f.json: layout.dp: expected an integer, got a string");
  CHECK(error_of([&] { (void)root.at("layout").at("mb"); }) == "f.json: layout.mb: missing field");
  CHECK(error_of([&] { (void)root.at("workers").items()[0].at("a"); }) ==
        "f.json: workers[0]: expected an object, got a number");
  CHECK(root.at("workers").items()[1].at("a").as_double() == 2.0);
  CHECK(error_of([&] { (void)root.at("layout").items(); }) ==
        "f.json: layout: expected an array, got an object");
}

TEST_CASE("as_int rejects fractions and as_nonnegative rejects negatives") {
  const auto j = recycle::parse_json(R"({"a": 2.5, "b": -1, "c": 3.0})", "f.json");
  const JsonView root(j, "f.json");
  CHECK_THROWS_AS((void)root.at("a").as_int(0, 10), InputError);
  CHECK(root.at("c").as_int(0, 10) == 3);
  CHECK(error_of([&] { (void)root.at("b").as_nonnegative(); }) ==
        "f.json: b: expected a number >= 0, got -1");
}

TEST_CASE("as_choice: the index of the value, or an error listing the choices") {
  const auto doc = recycle::parse_json(R"({"mode": "b", "odd": "x\ny", "fmt": "v2"})", "c.json");
  const recycle::JsonView root(doc, "c.json");
  CHECK(root.at("mode").as_choice({"a", "b", "c"}) == 1);
  CHECK(error_of([&] {
          (void)root.at("mode").as_choice({"a", "c"});
        }) == "c.json: mode: expected \"a\" or \"c\", got \"b\"");
  CHECK(error_of([&] {
          (void)root.at("mode").as_choice({"x", "y", "z"});
        }) == "c.json: mode: expected \"x\", \"y\" or \"z\", got \"b\"");
  // The user's text is quoted on one line, whatever bytes it holds.
  CHECK(error_of([&] {
          (void)root.at("odd").as_choice({"a", "b"});
        }) == "c.json: odd: expected \"a\" or \"b\", got \"x\\x0Ay\"");
  CHECK(error_of([&] { root.at("fmt").check_format("recycle.job/1"); }) ==
        "c.json: fmt: expected \"recycle.job/1\", got \"v2\"");
}
