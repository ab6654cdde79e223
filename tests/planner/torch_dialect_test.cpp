// The lowered CSV recycle writes for torch.distributed.pipelining, checked with the rules of the
// torch version it names, written again here from torch's `schedules.py` (2.8.0 and 2.15.0): the
// token grammar, `_validate_schedule`, the compute_comms checks of 2.15's
// `_prepare_schedule_with_comms` and `_validate_send_waits`, the input asserts of
// `_step_microbatches`, and a run of every rank's list with torch's blocking points (a compute
// waits for its input's SEND, a WAIT_SEND for the peer's RECV), which must finish. Then the file
// is read back and must be the schedule written, valid.
#include <doctest/doctest.h>

#include "tests/planner/test_helpers.hpp"

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "planner/generators.hpp"
#include "planner/language/lower.hpp"
#include "planner/language/schedule_io.hpp"
#include "planner/language/torch_dialect.hpp"
#include "planner/language/validator.hpp"

namespace {

using namespace recycle::planner;
using namespace recycle::planner::testing;

/// A token as torch's `_Action.from_str` reads it.
struct TorchAction {
  int stage = 0;
  std::string type;
  int mb = -1;  // -1: none
};

/// torch's action regex for each version (2.8 has no waits, no REDUCE_GRAD, no OVERLAP_F_B).
std::optional<TorchAction> torch_parse(const std::string& token, TorchVersion version) {
  static const std::regex v2_8(
      R"((\d+)(F|I|B|W|UNSHARD|RESHARD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*))");
  static const std::regex v2_15(
      R"((\d+)(WAIT_REDUCE_GRAD|WAIT_SEND_F|WAIT_SEND_B|REDUCE_GRAD|UNSHARD|RESHARD|SEND_F|RECV_F|SEND_B|RECV_B|F|I|B|W)(\d*))");
  std::smatch match;
  // torch uses re.match (a prefix); a token that is more than its match would be misread, so the
  // whole token must match.
  if (!std::regex_match(token, match, version == TorchVersion::k2_8 ? v2_8 : v2_15))
    return std::nullopt;
  TorchAction a;
  a.stage = std::stoi(match[1].str());
  a.type = match[2].str();
  a.mb = match[3].str().empty() ? -1 : std::stoi(match[3].str());
  return a;
}

using Rows = std::vector<std::vector<TorchAction>>;

Rows parse_rows(const std::string& csv, TorchVersion version) {
  Rows rows;
  for (const recycle::CsvRow& row : recycle::parse_csv(csv, "torch.csv")) {
    std::vector<TorchAction>& out = rows.emplace_back();
    for (const std::string& cell : row.fields) {
      INFO(cell);
      const auto a = torch_parse(cell, version);
      REQUIRE(a.has_value());
      out.push_back(*a);
    }
  }
  return rows;
}

bool is_compute_type(const std::string& t) {
  return t == "F" || t == "I" || t == "W" || t == "B";
}

/// `_validate_schedule`: counts per stage, F before I/B, I before W (in torch's walk, rank by
/// rank), each stage on one rank. Returns the stage-to-rank mapping it infers.
std::map<int, int> validate_schedule(const Rows& rows, int stages, int m) {
  std::map<int, std::map<std::string, std::set<int>>> seen;
  std::map<int, int> rank_of;
  for (int rank = 0; rank < static_cast<int>(rows.size()); ++rank) {
    for (const TorchAction& a : rows[static_cast<std::size_t>(rank)]) {
      if (a.type == "B" || a.type == "I") CHECK(seen[a.stage]["F"].count(a.mb) == 1);
      if (a.type == "W") CHECK(seen[a.stage]["I"].count(a.mb) == 1);
      if (is_compute_type(a.type)) seen[a.stage][a.type].insert(a.mb);
      const auto [it, fresh] = rank_of.emplace(a.stage, rank);
      CHECK(it->second == rank);  // "Stage is assigned to both rank ..."
    }
  }
  for (int s = 0; s < stages; ++s) {
    CAPTURE(s);
    auto& counts = seen[s];
    CHECK(counts["F"].size() == static_cast<std::size_t>(m));
    CHECK(counts["I"].size() == counts["W"].size());
    CHECK(counts["B"].size() + (counts["I"].size() + counts["W"].size()) / 2 ==
          static_cast<std::size_t>(m));
  }
  return rank_of;
}

/// 2.15's compute_comms checks: REDUCE_GRAD paired with the next WAIT_REDUCE_GRAD, at most one
/// pending; every SEND waited for exactly once, after it.
void validate_2_15_comms(const Rows& rows) {
  for (const auto& row : rows) {
    std::optional<int> pending_reduce;
    std::set<std::tuple<std::string, int, int>> pending, registered;
    for (const TorchAction& a : row) {
      if (a.type == "REDUCE_GRAD") {
        CHECK(!pending_reduce.has_value());
        pending_reduce = a.stage;
      } else if (a.type == "WAIT_REDUCE_GRAD") {
        REQUIRE(pending_reduce.has_value());
        CHECK(*pending_reduce == a.stage);
        pending_reduce.reset();
      } else if (a.type == "SEND_F" || a.type == "SEND_B") {
        const auto key = std::make_tuple(a.type, a.stage, a.mb);
        CHECK(registered.insert(key).second);
        pending.insert(key);
      } else if (a.type == "WAIT_SEND_F" || a.type == "WAIT_SEND_B") {
        const auto key = std::make_tuple(a.type.substr(5), a.stage, a.mb);
        CHECK(pending.erase(key) == 1);
      }
    }
    CHECK(!pending_reduce.has_value());
    CHECK(pending.empty());
  }
}

/// Gradient scaling. 2.15 scales a stage's gradients by 1/M at its REDUCE_GRAD, so every stage
/// needs exactly one, after its last W or B, on its own rank (one per rank would leave a second
/// chunk's stage with M times its gradient). 2.8 scales at the last backward and has no token.
void check_gradient_scaling(const Rows& rows, const std::map<int, int>& rank_of, int m,
                            TorchVersion version) {
  for (int rank = 0; rank < static_cast<int>(rows.size()); ++rank) {
    std::map<int, int> backwards, reduces;
    for (const TorchAction& a : rows[static_cast<std::size_t>(rank)]) {
      if (a.type == "W" || a.type == "B") ++backwards[a.stage];
      if (a.type == "REDUCE_GRAD") {
        CHECK(backwards[a.stage] == m);
        ++reduces[a.stage];
      }
    }
    for (const auto& [stage, r] : rank_of) {
      if (r != rank) continue;
      CAPTURE(stage);
      CHECK(reduces[stage] == (version == TorchVersion::k2_15 ? 1 : 0));
    }
  }
}

/// `_step_microbatches` on every rank at once: RECVs and SENDs are posted without blocking; a
/// compute whose input comes from another rank asserts that its RECV was posted and waits for the
/// peer's SEND; a WAIT_SEND waits for the peer's RECV. The run must end (torch would hang).
void run_ranks(const Rows& rows, const std::map<int, int>& rank_of, int last_stage) {
  std::set<std::tuple<std::string, int, int>> posted;  // SEND_F/SEND_B/RECV_F/RECV_B done
  std::vector<std::size_t> at(rows.size(), 0);
  const auto on_rank = [&](int stage, int rank) {
    const auto it = rank_of.find(stage);
    return it != rank_of.end() && it->second == rank;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int rank = 0; rank < static_cast<int>(rows.size()); ++rank) {
      const auto& row = rows[static_cast<std::size_t>(rank)];
      while (at[static_cast<std::size_t>(rank)] < row.size()) {
        const TorchAction& a = row[at[static_cast<std::size_t>(rank)]];
        bool ready = true;
        if (a.type == "F" && a.stage > 0 && !on_rank(a.stage - 1, rank)) {
          CHECK(posted.count({"RECV_F", a.stage, a.mb}) == 1);  // "before receiving input"
          ready = posted.count({"SEND_F", a.stage - 1, a.mb}) == 1;
        }
        if ((a.type == "I" || a.type == "B") && a.stage < last_stage &&
            !on_rank(a.stage + 1, rank)) {
          CHECK(posted.count({"RECV_B", a.stage, a.mb}) == 1);
          ready = posted.count({"SEND_B", a.stage + 1, a.mb}) == 1;
        }
        if (a.type == "WAIT_SEND_F") ready = posted.count({"RECV_F", a.stage + 1, a.mb}) == 1;
        if (a.type == "WAIT_SEND_B") ready = posted.count({"RECV_B", a.stage - 1, a.mb}) == 1;
        if (!ready) break;
        if (a.type.rfind("SEND_", 0) == 0 || a.type.rfind("RECV_", 0) == 0) {
          CHECK(posted.insert({a.type, a.stage, a.mb}).second);  // "Recv twice"
        }
        ++at[static_cast<std::size_t>(rank)];
        progress = true;
      }
    }
  }
  for (std::size_t rank = 0; rank < rows.size(); ++rank) {
    CAPTURE(rank);
    CHECK(at[rank] == rows[rank].size());  // else the ranks wait on each other forever
  }
}

/// What reading the torch file must give back: the lowered schedule without what torch has no
/// token for (OPT; REDUCE_GRAD in 2.8), which the simulator implies at the end of each list.
Schedule without_untokened(Schedule schedule, TorchVersion version) {
  schedule.generator = "file";
  // On one rank a V and a loop place every stage alike; the reader calls that a loop. And one
  // rank sends nothing, so its file reads as compute-only, REDUCE_GRAD left to the end.
  const bool one_rank = schedule.layout.pp == 1;
  if (one_rank) schedule.layout.placement = Placement::kLoop;
  for (WorkerSchedule& w : schedule.workers) {
    std::erase_if(w.actions, [&](const Action& a) {
      return a.type == ActionType::kOptimizer ||
             ((version == TorchVersion::k2_8 || one_rank) && a.type == ActionType::kReduceGrad);
    });
  }
  return schedule;
}

void check_torch_round_trip(const Schedule& compute) {
  const Schedule lowered = lower(compute);
  const int stages = compute.layout.virtual_stages();
  for (const TorchVersion version : {TorchVersion::k2_8, TorchVersion::k2_15}) {
    CAPTURE(static_cast<int>(version));
    const std::string csv = to_pytorch_csv(lowered, CsvFormat::kComputeComms, version);
    const Rows rows = parse_rows(csv, version);
    CHECK(rows.size() == static_cast<std::size_t>(compute.layout.pp));
    const std::map<int, int> rank_of = validate_schedule(rows, stages, compute.layout.microbatches);
    for (int v = 0; v < stages; ++v) CHECK(rank_of.at(v) == compute.layout.stage_of(v));
    if (version == TorchVersion::k2_15) validate_2_15_comms(rows);
    check_gradient_scaling(rows, rank_of, compute.layout.microbatches, version);
    run_ranks(rows, rank_of, stages - 1);

    const Schedule back = schedule_from_pytorch_csv(csv, "torch.csv");
    check_same(back, without_untokened(lowered, version));
    INFO(show(validate(back)));
    CHECK(validate(back).empty());
  }
}

}  // namespace

TEST_CASE("torch csv-comms: every generator's lowered CSV passes each torch version's rules") {
  for (const std::int32_t pp : {1, 2, 4}) {
    for (const std::int32_t m : {2 * pp, 8, 13}) {
      for (const std::string& name : fault_free_generator_names()) {
        CAPTURE(pp);
        CAPTURE(m);
        CAPTURE(name);
        Layout layout{1, pp, m, name == "interleaved" ? 2 : 1};
        if (name == "interleaved" && m % pp != 0) continue;  // the generator refuses it
        if (name == "2bw") {  // torch runs one weight version and flushes every iteration
          CHECK_THROWS_WITH_AS(
              (void)to_pytorch_csv(lower(generate(name, layout)), CsvFormat::kComputeComms),
              doctest::Contains("(2bw) runs across iterations"), recycle::InputError);
          continue;
        }
        check_torch_round_trip(generate(name, layout_for(name, layout)));
      }
    }
  }
}

TEST_CASE("torch 2.15: one REDUCE_GRAD per virtual stage, after the stage's last backward") {
  // Interleaved on 2 ranks, 2 chunks, M = 2: rank 0 holds stages 0 and 2. By hand from
  // Megatron's order, rank 0's backwards are 2B0 2B1 0B0 0B1, so stage 2 is reduced after 2B1
  // (and before 0B0) and stage 0 after 0B1; a single `0REDUCE_GRAD` would leave stage 2 at M
  // times its gradient.
  const Schedule lowered = lower(generate("interleaved", Layout{1, 2, 2, 2}));
  const std::string csv = to_pytorch_csv(lowered, CsvFormat::kComputeComms, TorchVersion::k2_15);
  const std::string rank0 = csv.substr(0, csv.find('\n'));
  const auto at = [&](const std::string& token) {
    const auto pos = (',' + rank0 + ',').find(',' + token + ',');
    REQUIRE(pos != std::string::npos);
    return pos;
  };
  CHECK(at("2B1") < at("2REDUCE_GRAD"));
  CHECK(at("2REDUCE_GRAD") + 13 == at("2WAIT_REDUCE_GRAD"));  // ",2REDUCE_GRAD" is 13 long
  CHECK(at("2REDUCE_GRAD") < at("0B0"));
  CHECK(at("0B1") < at("0REDUCE_GRAD"));
  CHECK(rank0.find("OPT") == std::string::npos);
  // 2.8 has neither token: its runtime scales each stage at its last backward.
  const std::string old = to_pytorch_csv(lowered, CsvFormat::kComputeComms, TorchVersion::k2_8);
  CHECK(old.find("REDUCE_GRAD") == std::string::npos);
  CHECK(old.find("WAIT") == std::string::npos);
}

TEST_CASE("torch 2.15: WAIT_SEND_F follows the local backward, other sends wait at the end") {
  // 1F1B, 2 ranks, M = 2, lowered by hand in schedule_io_test: rank 0 is
  // 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1; rank 1 sends B0 and B1 upstream.
  const std::string csv =
      to_pytorch_csv(lower(generate("1f1b", Layout{1, 2, 2, 1})), CsvFormat::kComputeComms);
  CHECK(csv ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0WAIT_SEND_F0,0RECV_B1,0B1,0WAIT_SEND_F1,"
        "0REDUCE_GRAD,0WAIT_REDUCE_GRAD\n"
        "1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1,1REDUCE_GRAD,1WAIT_REDUCE_GRAD,"
        "1WAIT_SEND_B0,1WAIT_SEND_B1\n");
}

TEST_CASE("torch tokens read back: pacing tokens dropped, OVERLAP_F_B split, REDUCE_GRADs merged") {
  // A hand-written 2.15 dump of a V on one rank (stages 0 and 1), FSDP tokens included.
  const std::string csv =
      "0UNSHARD,1UNSHARD,0F0,(1F0;0F1)OVERLAP_F_B,1B0,1REDUCE_GRAD,1WAIT_REDUCE_GRAD,1F1,1B1,"
      "0B0,0B1,0REDUCE_GRAD,0WAIT_REDUCE_GRAD,0RESHARD,1RESHARD\n";
  const Schedule back = schedule_from_pytorch_csv(csv, "v.csv");
  CHECK(back.layout == Layout{1, 1, 2, 2, Placement::kLoop});  // one rank: loop and V agree
  // No SEND or RECV: a compute-only file, whose REDUCE_GRADs come at the end when it is lowered.
  const std::vector<Action> want = {act(F, 0, 0), act(F, 1, 0), act(F, 0, 1), act(B, 1, 0),
                                    act(F, 1, 1), act(B, 1, 1), act(B, 0, 0), act(B, 0, 1)};
  CHECK(back.workers.at(0).actions == want);
  // With communication the REDUCE_GRADs of a rank become one, where the last was.
  const Schedule lowered = schedule_from_pytorch_csv(
      "0F0,0SEND_F0,0REDUCE_GRAD,0WAIT_REDUCE_GRAD\n"
      "1RECV_F0,1F0,1B0,1REDUCE_GRAD,1WAIT_REDUCE_GRAD\n",
      "c.csv");
  const std::vector<Action> rank0 = {
      act(F, 0, 0), act(ActionType::kSendF, 0, 0), {ActionType::kReduceGrad, 0, -1, 0}};
  CHECK(lowered.workers.at(0).actions == rank0);
}

TEST_CASE("torch CSVs: the placement is read from the tokens, or checked against --placement") {
  // 2 ranks, 2 chunks in a V: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2.
  const std::string v = "0F0,3F0,3B0,0B0\n1F0,2F0,2B0,1B0\n";
  CHECK(schedule_from_pytorch_csv(v, "v.csv").layout.placement == Placement::kV);
  const std::string loop = "0F0,2F0,2B0,0B0\n1F0,3F0,3B0,1B0\n";
  CHECK(schedule_from_pytorch_csv(loop, "l.csv").layout.placement == Placement::kLoop);
  const auto error = [](const std::string& csv, std::optional<Placement> placement) {
    try {
      (void)schedule_from_pytorch_csv(csv, "p.csv", placement);
    } catch (const recycle::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(v, Placement::kLoop) ==
        "p.csv:1: column 2: '3F0' is for stage 1 (virtual stage 3 of 2 ranks placed in a loop), "
        "but this row is rank 0 (--placement loop)");
  CHECK(error("0F0,2F0\n1F0,2B0\n", std::nullopt) ==
        "p.csv:2: column 2: '2B0' is for stage 0 (virtual stage 2 of 2 ranks placed in a loop), "
        "but this row is rank 1; a V placement does not fit either: '2F0' at line 1, column 2");
}
