// The readers of what an action makes (consumers_of) are the data inputs read backwards: every
// reader it lists names the maker among its inputs, every input names a maker that lists it, and
// the rules of docs/architecture.md hold by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "planner/language/semantics.hpp"

namespace {

using namespace recycle::planner;

constexpr ActionType kComputes[] = {ActionType::kForward, ActionType::kBackwardInput,
                                    ActionType::kBackwardWeight, ActionType::kBackward};

bool lists(const DataConsumers& readers, ActionType type, std::int32_t v, bool same_worker) {
  return std::any_of(readers.begin(), readers.end(), [&](const DataConsumer& c) {
    return c.type == type && c.virtual_stage == v && c.same_worker == same_worker;
  });
}

}  // namespace

TEST_CASE("consumers_of: F(v) feeds F(v+1) and its own backward, I(v) feeds I/B(v-1) and W(v)") {
  const std::int32_t last = 5;
  const DataConsumers f = consumers_of(ActionType::kForward, 2, last);
  CHECK(f.count == 3);
  CHECK(lists(f, ActionType::kForward, 3, false));
  CHECK(lists(f, ActionType::kBackwardInput, 2, true));
  CHECK(lists(f, ActionType::kBackward, 2, true));
  // The backward's own activations are not its last input: the gradient from stage 3 is.
  for (const DataConsumer& c : f) CHECK(c.completes == (c.type == ActionType::kForward));
  // At the last virtual stage the F is what its own backward waits for last.
  for (const DataConsumer& c : consumers_of(ActionType::kForward, last, last)) {
    CHECK(c.same_worker);
    CHECK(c.completes);
  }
  const DataConsumers i = consumers_of(ActionType::kBackwardInput, 2, last);
  CHECK(i.count == 3);
  CHECK(lists(i, ActionType::kBackwardInput, 1, false));
  CHECK(lists(i, ActionType::kBackward, 1, false));
  CHECK(lists(i, ActionType::kBackwardWeight, 2, true));
  // I(0) feeds only its W; a W feeds nobody.
  CHECK(consumers_of(ActionType::kBackwardInput, 0, last).count == 1);
  CHECK(consumers_of(ActionType::kBackwardWeight, 3, last).count == 0);
}

TEST_CASE("consumers_of is data_inputs read backwards, for every action and stage") {
  for (std::int32_t last = 0; last <= 4; ++last) {
    for (std::int32_t v = 0; v <= last; ++v) {
      for (const ActionType maker : kComputes) {
        CAPTURE(last);
        CAPTURE(v);
        for (const DataConsumer& c : consumers_of(maker, v, last)) {
          const DataInputs inputs = data_inputs(c.type, c.virtual_stage, last);
          const bool named = std::any_of(inputs.begin(), inputs.end(), [&](const DataInput& in) {
            return in.virtual_stage == v && produces(maker, in.producer) &&
                   in.same_worker == c.same_worker;
          });
          CHECK(named);
        }
      }
      for (const ActionType reader : kComputes) {
        for (const DataInput& in : data_inputs(reader, v, last)) {
          for (const ActionType maker : kComputes) {
            if (!produces(maker, in.producer)) continue;
            CHECK(lists(consumers_of(maker, in.virtual_stage, last), reader, v, in.same_worker));
          }
        }
      }
    }
  }
}
